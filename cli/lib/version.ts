/** flowctl's version (kept by hand: the CLI does not read the service's package.json at run time). */
export const VERSION = '0.1.0';
