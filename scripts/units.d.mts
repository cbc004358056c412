// Types of scripts/units.mjs, for the tests that import it.
export declare const CORE_LIMIT: number;
export declare const FILE_LIMIT: number;
export interface Unit {
  readonly name: string;
  readonly holds: string;
  readonly paths: readonly string[];
  readonly offUnless?: string;
}
export declare const UNITS: readonly Unit[];
export declare function isMatch(path: string, file: string): boolean;
export declare function unitsOf(file: string, units?: readonly Unit[]): Unit[];
export declare function sourceFiles(root: string): string[];
export declare function nonBlankLines(text: string): number;
export interface FileSize {
  readonly file: string;
  readonly lines: number;
}
export declare const ENTRIES: { readonly loaded: string; readonly service: string };
export declare function importedFiles(root: string, entry: string): string[];
export interface Part {
  readonly files: number;
  readonly lines: number;
}
export interface Sizes {
  readonly units: ReadonlyArray<{
    readonly name: string;
    readonly offUnless: string | undefined;
    readonly lines: number;
    readonly serviceLines: number;
    readonly files: readonly FileSize[];
  }>;
  readonly unclaimed: readonly string[];
  readonly claimedTwice: readonly string[];
  readonly total: number;
  readonly files: number;
  /** The files but browser code and declarations, which Node never loads. */
  readonly serverFiles: number;
  readonly deployment: { readonly loaded: Part; readonly service: Part; readonly byDefault: Part };
}
export declare function measure(root: string): Sizes;
