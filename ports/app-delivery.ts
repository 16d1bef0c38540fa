/**
 * App delivery (previews and deployments of apps): build an app's files into a static site and keep
 * built sites in this process's memory. Adapter: `infra/apps/` (esbuild in a worker thread with a
 * time and output-size limit; an LRU of built sites). Sites are a pure function of their inputs (the
 * files, the contract, the call path), so a process that lacks one rebuilds it from the log.
 */

/** A source file as an app holds it: `utf8` text or `base64` of the bytes. */
export interface AppSourceFile {
  path: string;
  content: string;
  encoding: 'utf8' | 'base64';
}

export interface BuiltFile {
  body: Buffer;
  contentType: string;
  /** Strong ETag (quoted sha256 prefix of the body). */
  etag: string;
}

export interface BuiltSite {
  /** Served files by normalised path (no leading slash); `index.html` answers the site's root. */
  files: Map<string, BuiltFile>;
  bytes: number;
}

/** Where a build went wrong: the source file and line (1-based) when esbuild knows them. */
export interface BuildProblem {
  file: string | null;
  line: number | null;
  column: number | null;
  message: string;
}

export type AppBuildResult =
  | { ok: true; site: BuiltSite; log: string[]; durationMs: number; entries: string[] }
  | {
      ok: false;
      /** `PACKAGE_NOT_ALLOWED`: an import of a package that is not on the list (`allowedPackages` says which are). */
      code: 'APP_BUILD_FAILED' | 'APP_BUILD_TIMEOUT' | 'APP_BUILD_TOO_LARGE' | 'PACKAGE_NOT_ALLOWED';
      message: string;
      problems: BuildProblem[];
      log: string[];
      durationMs: number;
      allowedPackages?: readonly string[];
    };

export interface AppBuildInput {
  files: AppSourceFile[];
  /** JSON Schemas the generated `/app-client.js` validates against and documents. */
  contract: { input: Record<string, unknown>; output: Record<string, unknown> };
}

export interface AppBuilder {
  /** Bundles TS/JSX entries (scripts the HTML files name) and copies the rest; adds `app-client.js`. Never throws for the app's own mistakes. */
  build(input: AppBuildInput): Promise<AppBuildResult>;
}

export interface BuiltSiteCache {
  get(key: string): BuiltSite | undefined;
  set(key: string, site: BuiltSite): void;
  delete(key: string): void;
}

export interface AppDelivery {
  builder: AppBuilder;
  sites: BuiltSiteCache;
}
