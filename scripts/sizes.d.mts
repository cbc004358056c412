// Types of scripts/sizes.mjs, for the tests that import it.
export declare const FILE_LIMIT: number;
export declare function sourceFiles(root: string): string[];
export declare function nonBlankLines(text: string): number;
export declare function folderOf(file: string): string;
export interface FileSize {
  readonly file: string;
  readonly lines: number;
}
export declare const ENTRIES: { readonly loaded: readonly string[]; readonly service: readonly string[] };
export declare const OFF_BY_DEFAULT: ReadonlyArray<{ readonly path: string; readonly offUnless: string }>;
export declare function importedFiles(root: string, entries: readonly string[]): string[];
export interface Part {
  readonly files: number;
  readonly lines: number;
}
export interface Sizes {
  readonly folders: ReadonlyArray<{
    readonly name: string;
    readonly part: 'core' | 'feature' | 'composition';
    readonly offUnless: string | undefined;
    readonly lines: number;
    readonly serviceLines: number;
    readonly files: readonly FileSize[];
  }>;
  readonly total: number;
  readonly files: number;
  /** The files but browser code and declarations, which Node never loads. */
  readonly serverFiles: number;
  readonly deployment: { readonly loaded: Part; readonly service: Part; readonly byDefault: Part };
}
export declare function measure(root: string): Sizes;
