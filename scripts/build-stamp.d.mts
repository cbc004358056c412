// Types of scripts/build-stamp.mjs, for the tests that import it.
export declare function buildInputs(root: string): string[];
export declare const STAMP_PATH: string;
export declare function sourcesHash(root: string): string;
export declare function buildState(root: string): 'current' | 'missing' | 'stale';
