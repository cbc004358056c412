// Types of scripts/unused-exports.mjs, for the test that imports it.
export interface UnusedExport {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  /** True when the export's own file uses the name (drop `export`), false when nothing does. */
  readonly local: boolean;
}
export declare function unusedExports(root: string): UnusedExport[];
export declare function describeUnused(unused: readonly UnusedExport[]): string[];
