/**
 * The npm packages an app may import. They are bundled from the service's own `node_modules`
 * (installed with the service, versions fixed by its lockfile), never downloaded at build time: a
 * build reaches no registry, and every app of one service gets the same, reviewed code. Why a list
 * and not any installed package: the service's node_modules also holds server drivers and SDKs that
 * have no business in a browser bundle, and a list is what a builder (human or model) can be told.
 */
export interface AppPackage {
  name: string;
  /** The import specifiers an app may write; anything else from the package is refused too. */
  specifiers: readonly string[];
  why: string;
}

export const APP_PACKAGES: readonly AppPackage[] = [
  { name: 'preact', specifiers: ['preact', 'preact/hooks', 'preact/jsx-runtime'], why: 'components in 4 KB; JSX through `@jsxImportSource preact`' },
  { name: 'react', specifiers: ['react', 'react/jsx-runtime'], why: 'the component library builders know best' },
  { name: 'react-dom', specifiers: ['react-dom', 'react-dom/client'], why: 'renders React into the page (`createRoot`)' },
  { name: 'chart.js', specifiers: ['chart.js', 'chart.js/auto', 'chart.js/helpers'], why: 'charts on a canvas; no native code, works bundled' },
];

/** Every specifier an app may import, in the order of the list. */
export const APP_PACKAGE_SPECIFIERS: readonly string[] = APP_PACKAGES.flatMap((p) => p.specifiers);

/** The build error code of an import that is neither the app's own file nor on the list. */
export const PACKAGE_NOT_ALLOWED = 'PACKAGE_NOT_ALLOWED';

/** A URL or a `node:`-like scheme: never a package, never fetched. */
export const isUrlImport = (specifier: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(specifier) || specifier.startsWith('//');

/** Bare = neither relative nor rooted in the app nor a URL: what would come from node_modules. */
export const isBareImport = (specifier: string): boolean =>
  !specifier.startsWith('./') && !specifier.startsWith('../') && !specifier.startsWith('/') && specifier !== '.' && specifier !== '..' && !isUrlImport(specifier);

export const isAllowedAppImport = (specifier: string): boolean => APP_PACKAGE_SPECIFIERS.includes(specifier);

/** The text a refused import shows at its file and line: it names the list, so the fix is in the error. */
export function packageNotAllowedMessage(specifier: string): string {
  return `${PACKAGE_NOT_ALLOWED}: cannot import "${specifier}": apps may import only their own files and these packages: ${APP_PACKAGE_SPECIFIERS.join(', ')}`;
}
