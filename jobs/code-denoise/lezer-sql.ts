/**
 * SQL read by @codemirror/lang-sql: the dialect comes from the fence alias
 * (MySQL and MariaDB with backslash escapes, SQLite, T-SQL, PL/SQL, else
 * PostgreSQL; a generic "sql" with backtick identifiers is read as MySQL).
 * Comments are removed except MySQL's versioned code and optimizer hints;
 * strings and quoted identifiers are kept byte for byte.
 */
import { MSSQL, MariaSQL, MySQL, PLSQL, PostgreSQL, SQLDialect, SQLite } from '@codemirror/lang-sql';
import { collect, countErrors, cSpace, set, type DenoiseResult, type Grammar } from './lezer-walk.js';
import { normalize, type Edit } from './normalize.js';

/** MySQL and MariaDB read a backslash in a string as an escape ('It\\'s'); lang-sql's dialects leave it out. */
const MYSQL = SQLDialect.define({ ...MySQL.spec, backslashEscapes: true });
const MARIADB = SQLDialect.define({ ...MariaSQL.spec, backslashEscapes: true });

function sqlDialect(alias: string): SQLDialect {
  switch (alias) {
    case 'mysql':
      return MYSQL;
    case 'mariadb':
      return MARIADB;
    case 'sqlite':
    case 'sqlite3':
      return SQLite;
    case 'tsql':
    case 't-sql':
    case 'mssql':
    case 'sqlserver':
      return MSSQL;
    case 'plsql':
    case 'oracle':
      return PLSQL;
    default:
      return PostgreSQL;
  }
}

/** MySQL runs `/*! ... *\/` (versioned code) and reads `/*+ ... *\/` (optimizer hints): code, not comments. */
const SQL_KEEP = /^\/\*[!+]/;

export function denoiseSql(source: string, alias: string): DenoiseResult {
  let dialect = sqlDialect(alias);
  let tree = dialect.language.parser.parse(source);
  if (alias === 'sql') {
    // Generic "sql": PostgreSQL (the standard's quoting), unless backtick identifiers say MySQL.
    let backtick = false;
    tree.iterate({
      enter: (n) => {
        if (n.name === 'Operator' && source.slice(n.from, n.to) === '`') backtick = true;
      },
    });
    if (backtick) {
      dialect = MYSQL;
      tree = dialect.language.parser.parse(source);
    }
  }
  const grammar: Grammar = {
    parsers: [],
    comments: set('LineComment', 'BlockComment'),
    literals: set('String', 'QuotedIdentifier', 'Bits', 'Bytes', 'SpecialVar'),
    blockSeparator: cSpace,
    keep: (comment) => SQL_KEEP.test(comment),
  };
  const edits: Edit[] = [];
  const commentsRemoved = collect(grammar, tree, source, edits);
  return { code: normalize(source, edits, { keepIndent: false }), commentsRemoved, syntaxErrors: countErrors(tree) };
}
