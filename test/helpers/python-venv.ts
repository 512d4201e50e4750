/**
 * A Python interpreter with pinned PyPI packages, for tests that drive clients
 * the project did not write (Coinbase's x402 SDK, the a2a-sdk).
 *
 * `pythonVenv` answers, in this order: the interpreter an environment variable
 * names (it wins, and is never replaced by the venv when it cannot import what
 * is asked); else test/output/<name>-venv when it was built from the same
 * package list (the list is kept in its `.pinned` file: a changed list
 * rebuilds it) and imports what is asked; else a fresh venv made with
 * `python3 -m venv` and `pip install` from PyPI (minutes the first time; pip's
 * own cache makes later builds fast). A build happens in a private directory
 * (`<name>-venv.build-<pid>`) renamed into place once pip has finished and the
 * imports work, so two test files asking at once never see a half-built venv,
 * and a build killed midway leaves nothing that looks finished (its directory
 * is removed by the next build). The interpreter is always invoked as
 * `<venv>/bin/python` (`python -m pip`, never the console scripts whose
 * shebangs name the build directory), which finds its packages from
 * pyvenv.cfg next to it, so the rename is safe.
 *
 * `pythonForTests` adds the policy: when no interpreter can be had (no
 * network, no python3-venv) the tests skip, saying why on the console; with
 * `CI` set they run and fail with that reason instead (CI reaches PyPI, so a
 * skip there would hide a regression).
 *
 * Hand-written rather than a lock library: an atomic rename needs none, and no
 * lock package is among the project's dependencies.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const OUTPUT_DIR = fileURLToPath(new URL('../output/', import.meta.url));
const VENV_TIMEOUT_MS = 120_000;
const PIP_TIMEOUT_MS = 900_000;
const PROBE_TIMEOUT_MS = 60_000;
const PINNED_FILE = '.pinned';

export interface PythonVenvSpec {
  /** The venv is test/output/<name>-venv. */
  name: string;
  /** pip requirement specifiers, each pinned to one version (e.g. `x402[extensions]==2.25.0`). */
  packages: readonly string[];
  /** Modules the interpreter must import to be usable (checked on the override, the cached venv and a new build). */
  imports: readonly string[];
  /** Environment variable naming an interpreter to use instead of the venv (e.g. `X402_PYTHON`). */
  override: string;
}

export type PythonInterpreter = { python: string } | { why: string };

/** An interpreter that imports `spec.imports`: the override, the cached venv, or a venv built now. */
export async function pythonVenv(spec: PythonVenvSpec): Promise<PythonInterpreter> {
  const imports = spec.imports.join(', ');
  const overridden = process.env[spec.override];
  if (overridden) {
    const probe = await importsAll(overridden, spec.imports);
    return probe.ok
      ? { python: overridden }
      : { why: `${spec.override}=${overridden} cannot import ${imports}: ${probe.why}` };
  }
  const venv = join(OUTPUT_DIR, `${spec.name}-venv`);
  const pinned = spec.packages.join('\n');
  if (await isReady(venv, pinned, spec.imports)) return { python: venvPython(venv) };

  await mkdir(OUTPUT_DIR, { recursive: true });
  await removeAbandonedBuilds(spec.name);
  const build = `${venv}.build-${process.pid}`;
  await rm(build, { recursive: true, force: true });
  try {
    const made = await run('python3', ['-m', 'venv', build], VENV_TIMEOUT_MS);
    if (!made.ok) return { why: `python3 -m venv failed (Debian needs python3-venv): ${made.why}` };
    const pip = await run(
      venvPython(build),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-q', ...spec.packages],
      PIP_TIMEOUT_MS,
    );
    if (!pip.ok) return { why: `pip install ${spec.packages.join(' ')} failed: ${pip.why}` };
    const probe = await importsAll(venvPython(build), spec.imports);
    if (!probe.ok) return { why: `the new venv cannot import ${imports}: ${probe.why}` };
    await writeFile(join(build, PINNED_FILE), pinned);
    return (await moveIntoPlace(build, venv, pinned, spec.imports))
      ? { python: venvPython(venv) }
      : { why: `${venv} is being replaced by another build with other packages` };
  } finally {
    await rm(build, { recursive: true, force: true });
  }
}

export interface PythonForTests {
  /** True when the tests should be skipped: no interpreter, and `CI` is not set. */
  skip: boolean;
  /** The interpreter; throws the reason there is none (the failure the tests report under `CI`). */
  python(): string;
}

/** `pythonVenv` with the tests' policy: skip loudly without an interpreter, fail instead under `CI`. */
export async function pythonForTests(testName: string, spec: PythonVenvSpec): Promise<PythonForTests> {
  const found = await pythonVenv(spec);
  if ('python' in found) return { skip: false, python: () => found.python };
  const ci = inCI();
  console.warn(
    `${testName}: NO PYTHON INTERPRETER, the tests that need one ${ci ? 'FAIL (CI is set)' : 'are SKIPPED'}: ${found.why}`,
  );
  return {
    skip: !ci,
    python: () => {
      throw new Error(`${testName}: no Python interpreter with ${spec.packages.join(' ')}: ${found.why}`);
    },
  };
}

function inCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

const venvPython = (venv: string) => join(venv, 'bin', 'python');

async function isReady(venv: string, pinned: string, imports: readonly string[]): Promise<boolean> {
  const recorded = await readFile(join(venv, PINNED_FILE), 'utf8').catch(() => undefined);
  return recorded === pinned && existsSync(venvPython(venv)) && (await importsAll(venvPython(venv), imports)).ok;
}

/**
 * Renames the finished build to `venv`. When `venv` exists: kept if another build put the same packages there
 * meanwhile, else moved aside and removed (a stale list, or a broken venv). False when the place keeps being taken.
 */
async function moveIntoPlace(build: string, venv: string, pinned: string, imports: readonly string[]) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await rename(build, venv);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
    if (await isReady(venv, pinned, imports)) return true;
    const stale = `${venv}.stale-${process.pid}-${attempt}`;
    await rename(venv, stale).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rm(stale, { recursive: true, force: true });
  }
  return false;
}

/** Removes the build directories of processes that are gone (a test run killed during pip install). */
async function removeAbandonedBuilds(name: string) {
  const prefix = `${name}-venv.`;
  for (const entry of await readdir(OUTPUT_DIR)) {
    const owner = /^(?:build|stale)-(\d+)/.exec(entry.slice(prefix.length));
    if (!entry.startsWith(prefix) || !owner || isAlive(Number(owner[1]))) continue;
    await rm(join(OUTPUT_DIR, entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function importsAll(python: string, modules: readonly string[]) {
  return run(python, ['-c', `import ${modules.join(', ')}`], PROBE_TIMEOUT_MS);
}

/** Runs a command to its end (killed past `timeoutMs`); the reason of a failure is the end of its stderr. */
function run(command: string, args: string[], timeoutMs: number): Promise<{ ok: true } | { ok: false; why: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
    child.on('error', (error) => resolve({ ok: false, why: error.message }));
    child.on('close', (status, signal) => {
      if (status === 0) return resolve({ ok: true });
      const tail = stderr.trim().split('\n').slice(-5).join('\n');
      resolve({ ok: false, why: `${command} exited with ${signal ?? status}${tail ? `: ${tail}` : ''}` });
    });
  });
}
