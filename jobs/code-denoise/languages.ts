/** Languages code-denoise reads, by canonical name, with the aliases callers use. */
export const LANGUAGES = {
  javascript: ['js', 'javascript', 'jsx', 'mjs', 'cjs', 'node', 'nodejs', 'ecmascript', 'es6'],
  typescript: ['ts', 'typescript', 'tsx', 'mts', 'cts'],
  python: ['py', 'python', 'python3', 'py3'],
  css: ['css'],
  html: ['html', 'htm', 'xhtml'],
  jsonc: ['json', 'jsonc', 'json-with-comments'],
  go: ['go', 'golang'],
  rust: ['rs', 'rust'],
  java: ['java'],
  c: ['c', 'h'],
  cpp: ['cpp', 'c++', 'cc', 'cxx', 'hpp', 'hh', 'hxx', 'h++'],
  shell: ['sh', 'bash', 'shell', 'shellscript', 'zsh', 'ksh', 'dash'],
  sql: [
    'sql',
    'postgresql',
    'postgres',
    'pgsql',
    'psql',
    'plpgsql',
    'sqlite',
    'sqlite3',
    'tsql',
    't-sql',
    'mssql',
    'sqlserver',
    'plsql',
    'oracle',
  ],
  mysql: ['mysql', 'mariadb'],
} as const satisfies Record<string, readonly string[]>;

export type Language = keyof typeof LANGUAGES;
export const SUPPORTED_LANGUAGES = Object.keys(LANGUAGES) as Language[];

const BY_ALIAS = new Map<string, { language: Language; alias: string }>();
for (const [language, aliases] of Object.entries(LANGUAGES) as [Language, readonly string[]][]) {
  BY_ALIAS.set(language, { language, alias: language });
  for (const alias of aliases) BY_ALIAS.set(alias, { language, alias });
}

/** The canonical language of a name or alias (case-insensitive), and the alias as given (SQL dialects differ by it). */
export function resolveLanguage(name: string): { language: Language; alias: string } | undefined {
  return BY_ALIAS.get(name.trim().toLowerCase());
}
