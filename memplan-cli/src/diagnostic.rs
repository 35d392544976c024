//! Input errors shown the way compilers show them: the message, `file:line:column`, the source
//! line with the bad token underlined, and how to fix it.
//!
//! `codespan-reporting` draws the snippet. It was chosen over `miette` (a derive-based error
//! framework with many dependencies: more than this needs) and `ariadne` (pretty, but its API
//! changes often): it is small, stable, renders to a plain `String` (so tests can compare output)
//! and lays out snippets like rustc, which matches the `--> file:line:col` form of
//! [`memplan_core::InputError`]. It is a dependency of the CLI only.

use std::fmt;

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use memplan_core::InputError;

/// An input error already drawn with its source snippet; printed as is.
#[derive(Debug)]
pub(crate) struct Rendered(pub(crate) String);

impl fmt::Display for Rendered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.trim_end())
    }
}

impl std::error::Error for Rendered {}

/// The byte range of the token at 1-based `line` and character `column` of `text`: from there to
/// the next space, comma, bracket or quote-delimited end (at least one character, at most the
/// line).
fn token_range(text: &str, line: usize, column: usize) -> std::ops::Range<usize> {
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let line_text = l.trim_end_matches(['\n', '\r']);
            let offset = line_text
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(line_text.len(), |(o, _)| o);
            let rest = &line_text[offset..];
            let quoted = rest.starts_with('"');
            let len = if quoted {
                rest[1..].find('"').map_or(rest.len(), |end| end + 2)
            } else {
                rest.find([' ', '\t', ',', ']', '}', '='])
                    .unwrap_or(rest.len())
            };
            let len = len.max(rest.chars().next().map_or(0, char::len_utf8));
            return start + offset..start + offset + len;
        }
        start += l.len();
    }
    text.len()..text.len()
}

/// `error` drawn with its snippet from `text`.
pub(crate) fn render(error: &InputError, text: &str) -> Rendered {
    let file = SimpleFile::new(error.file.as_str(), text);
    let range = token_range(text, error.line, error.column);
    let diagnostic = Diagnostic::error()
        .with_message(&error.message)
        .with_labels(vec![Label::primary((), range)])
        .with_notes(vec![format!("help: {}", error.help)]);
    // ASCII, like rustc: `--> file:line:col`, `|` borders, `^` under the token.
    let config = term::Config {
        chars: term::Chars::ascii(),
        ..term::Config::default()
    };
    match term::emit_into_string(&config, &file, &diagnostic) {
        Ok(text) => Rendered(text),
        // The location is outside the text (cannot happen for errors of this text): plain form.
        Err(_) => Rendered(format!("error: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bad_token_is_underlined() {
        let text = "[model]\nname = \"m\"\n\n[tensors]\nx = { dtype = \"f33\", shape = [1] }\n";
        let error = InputError::new("m.toml", 5, 15, "unknown dtype `f33`", "use f32");
        let rendered = render(&error, text).to_string();
        assert!(
            rendered.starts_with("error: unknown dtype `f33`"),
            "{rendered}"
        );
        assert!(rendered.contains("--> m.toml:5:15"), "{rendered}");
        assert!(
            rendered.contains("x = { dtype = \"f33\", shape = [1] }"),
            "{rendered}"
        );
        assert!(rendered.contains("^^^^^"), "{rendered}");
        assert!(rendered.contains("help: use f32"), "{rendered}");
    }

    #[test]
    fn ranges_stay_inside_the_text() {
        let text = "a = 1\nbb\n";
        assert_eq!(token_range(text, 1, 5), 4..5);
        assert_eq!(token_range(text, 2, 1), 6..8);
        assert_eq!(token_range(text, 9, 1), 9..9);
        assert_eq!(token_range(text, 2, 40), 8..8);
    }
}
