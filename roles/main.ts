/**
 * Entry point of `npm start`. With no configuration it runs every role in one
 * process on the embedded adapters: no server, no key, no internet.
 *
 * SIGTERM and SIGINT are trapped before anything else is loaded: an ESM entry
 * loads its whole static import graph before its first line runs, so the rest
 * (config, ports, roles) comes in by a dynamic import after the trap.
 */
import { trapShutdownSignals } from './shutdown-signals.js';

const signals = trapShutdownSignals();
const { launch } = await import('./launch.js');
await launch(signals);
