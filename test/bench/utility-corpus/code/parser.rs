//! A tiny INI parser.
//!
//! Sections are `[name]`, keys are `key = value`; `;` and `#` start comments.

use std::collections::HashMap;
use std::fmt;

/// Parse errors with their line number.
#[derive(Debug, PartialEq)]
pub enum ParseError {
    /// A line that is neither a section, a key nor a comment.
    Syntax { line: usize },
    /// A key before the first section.
    Orphan { line: usize, key: String },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax { line } => write!(f, "syntax error on line {line} // check brackets"),
            ParseError::Orphan { line, key } => write!(f, "key {key:?} on line {line} has no section"),
        }
    }
}

/* A parsed document: section -> key -> value. /* nested */ comments are legal in Rust. */
pub type Document = HashMap<String, HashMap<String, String>>;

const RAW: &str = r#"path = "C:\temp" // not a comment"#;
const BYTES: &[u8] = b"/* bytes */";

/// Parses `input`.
pub fn parse(input: &str) -> Result<Document, ParseError> {
    let mut doc = Document::new();
    let mut current: Option<String> = None;
    for (i, raw) in input.lines().enumerate() {
        let line = raw.trim();
        // Skip blanks and comments.
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim().to_string());
            doc.entry(name.trim().to_string()).or_default();
            continue;
        }
        let (key, value) = line.split_once('=').ok_or(ParseError::Syntax { line: i + 1 })?;
        let section = current.clone().ok_or_else(|| ParseError::Orphan { line: i + 1, key: key.trim().into() })?;
        doc.get_mut(&section).unwrap().insert(key.trim().into(), value.trim().into());
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_keys() {
        let doc = parse("[db]\nurl = postgres://u@h/db\n").unwrap();
        assert_eq!(doc["db"]["url"], "postgres://u@h/db"); // "//" in a URL
        assert_eq!(RAW.len(), 32);
        assert_eq!(BYTES.len(), 11);
    }
}
