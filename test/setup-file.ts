/**
 * Runs in every test file before its tests: whatever the file made with tmpFile/tmpDir
 * (test/builder/capture.ts) is removed when the file's tests end, pass or fail.
 */
import { afterAll } from 'vitest';
import { removeTmpFiles } from './builder/capture.js';

afterAll(removeTmpFiles);
