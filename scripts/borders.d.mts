// Types of scripts/borders.mjs, for the tests that import it.
export interface FeatureFolder {
  readonly folder: string;
  readonly holds: string;
  readonly offUnless?: string;
}
export declare const FEATURES: readonly FeatureFolder[];
export declare const COMPOSITION: readonly string[];
export declare const CORE_SURFACE: readonly string[];
export declare const FILE_LIMIT: number;
export declare function partOf(file: string, features?: readonly FeatureFolder[]): string;
export declare function sourceFiles(root: string): string[];
export declare function importsIn(file: string, text: string): string[];
export declare function importGraph(root: string): Map<string, string[]>;
export declare function borderProblems(
  graph: ReadonlyMap<string, readonly string[]>, features?: readonly FeatureFolder[], surface?: readonly string[],
): string[];
export declare function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][];
