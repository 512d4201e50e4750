// Registered with `node --import`: appends every module URL the process resolves to the file named by
// RECORD_MODULES_TO (one per line), so a test can see what loading a role pulls in.
import { register } from 'node:module';

register('./module-recorder-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_MODULES_TO } });
