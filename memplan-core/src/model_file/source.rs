//! The text of a model file, mapping byte spans to `LINE:COL` and making located errors.

use std::ops::Range;

use crate::error::InputError;
use crate::model_file::Location;

/// A model file's name and text, with the start of every line for `LINE:COL` look-ups.
pub(crate) struct SourceText<'a> {
    file: &'a str,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> SourceText<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            file,
            text,
            line_starts,
        }
    }

    /// The file's name as given.
    pub(crate) fn file(&self) -> &str {
        self.file
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    pub(crate) fn location(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line - 1];
        let column = self
            .text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count())
            + 1;
        Location { line, column }
    }

    /// An error at the start of `span`.
    pub(crate) fn error(
        &self,
        span: &Range<usize>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        self.error_at(self.location(span.start), message, help)
    }

    /// An error at `location`.
    pub(crate) fn error_at(
        &self,
        location: Location,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, location.line, location.column, message, help)
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo.
pub(crate) fn closest<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, c)| d <= (c.len().max(name.len()) / 3).max(1))
        .min()
        .map(|(_, c)| c)
}

/// " (did you mean `x`?)" or nothing.
pub(crate) fn did_you_mean<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> String {
    closest(name, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based_and_count_characters() {
        let source = SourceText::new("m.toml", "ab\n\u{e9}x = 1\n");
        assert_eq!(source.location(0), Location { line: 1, column: 1 });
        assert_eq!(source.location(3), Location { line: 2, column: 1 });
        // 'x' follows a two-byte character.
        assert_eq!(source.location(5), Location { line: 2, column: 2 });
    }

    #[test]
    fn suggests_close_names() {
        assert_eq!(closest("dtyp", ["dtype", "shape"]), Some("dtype"));
        assert_eq!(closest("zzzzz", ["dtype", "shape"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
