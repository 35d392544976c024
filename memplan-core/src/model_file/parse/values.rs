//! The helpers every table uses: allowed keys (with a did-you-mean), a table's entries in file
//! order, a value's type, integers, byte counts, alignments, identifiers, lists of tensor names
//! and the shape and size of a typed tensor or weight, each a located error when wrong.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeValue};

use super::{MAX_TENSOR_BYTES, Names, Parser, Result, Table, Value};
use crate::error::InputError;
use crate::model_file::source::did_you_mean;
use crate::model_file::{DType, MAX_ALIGNMENT, Tensor, identifier_problem, parse_byte_size};

pub(super) fn kind(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// A table's entries in file order (the table is keyed by name).
pub(super) fn in_file_order<'t, 'i>(
    table: &'t Table<'i>,
) -> Vec<(&'t Spanned<DeString<'i>>, &'t Value<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// The bytes of `shape`'s elements of `dtype`, if at most [`MAX_TENSOR_BYTES`].
pub(super) fn typed_bytes(dtype: DType, shape: &[u64]) -> Option<u64> {
    shape
        .iter()
        .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
        .filter(|&bytes| bytes <= MAX_TENSOR_BYTES)
}

/// What a `shape`'s errors tell to do: a tensor's and a weight's differ (a weight may be a
/// scalar, `shape = []`).
pub(super) struct ShapeHelp {
    /// When the value is not an array.
    pub(super) not_array: &'static str,
    /// When the array is empty, or `None` if an empty shape (a scalar) is allowed.
    pub(super) empty: Option<&'static str>,
    /// When a dimension is zero.
    pub(super) zero: &'static str,
}

impl Parser<'_> {
    pub(super) fn check_keys(
        &self,
        table: &Table<'_>,
        allowed: &[&str],
        place: &str,
        help: impl Fn(&str) -> String,
    ) -> Result<()> {
        let mut keys: Vec<_> = table.keys().collect();
        keys.sort_by_key(|k| k.span().start);
        for key in keys {
            let name: &str = key.get_ref();
            if !allowed.contains(&name) {
                return Err(self.source.error(
                    &key.span(),
                    format!("unknown key `{name}` {place}"),
                    format!(
                        "{}{}",
                        help(name),
                        did_you_mean(name, allowed.iter().copied())
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn table<'v, 'i>(
        &self,
        value: &'v Value<'i>,
        what: &str,
        help: &str,
    ) -> Result<&'v Table<'i>> {
        match value.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be a table, not {}", kind(other)),
                help,
            )),
        }
    }

    /// The `dtype` of `what` (a tensor or a weight): a known dtype's name.
    pub(super) fn dtype(&self, value: &Value<'_>, what: &str) -> Result<DType> {
        let name = self.string(value, &format!("`dtype` of {what}"))?;
        name.parse().map_err(|_| {
            self.source.error(
                &value.span(),
                format!("unknown dtype `{name}` for {what}"),
                format!(
                    "use one of: {}{}",
                    DType::known_names(),
                    did_you_mean(name, DType::ALL.iter().map(|d| d.name()))
                ),
            )
        })
    }

    pub(super) fn string<'v>(&self, value: &'v Value<'_>, what: &str) -> Result<&'v str> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be a string, not {}", kind(other)),
                "put it in double quotes",
            )),
        }
    }

    pub(super) fn boolean(&self, value: &Value<'_>, what: &str) -> Result<bool> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be `true` or `false`, not {}", kind(other)),
                "write `true` or `false` without quotes",
            )),
        }
    }

    pub(super) fn integer(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        match value.get_ref() {
            DeValue::Integer(i) => u64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                self.source.error(
                    &value.span(),
                    format!("{what} must be a non-negative integer that fits in 64 bits, not {i}"),
                    "write a non-negative integer",
                )
            }),
            other => Err(self.source.error(
                &value.span(),
                format!("{what} must be an integer, not {}", kind(other)),
                "write a non-negative integer without quotes",
            )),
        }
    }

    pub(super) fn byte_count(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        match value.get_ref() {
            DeValue::String(s) => parse_byte_size(s).ok_or_else(|| {
                self.source.error(
                    &value.span(),
                    format!("{what} `{s}` is not a byte size"),
                    "write an integer number of bytes (`4096`) or a string like \"512 KiB\", \"2 MiB\", \"1 GiB\"",
                )
            }),
            _ => self.integer(value, what),
        }
    }

    pub(super) fn alignment(&self, value: &Value<'_>, what: &str) -> Result<u64> {
        let alignment = self.integer(value, what)?;
        if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
            let lower = if alignment == 0 {
                1
            } else {
                1u64 << alignment.ilog2()
            };
            return Err(self.source.error(
                &value.span(),
                format!("{what} is {alignment}, which is not a power of two up to 2^29"),
                format!(
                    "use a power of two such as 1, 8, 16 or 64 (nearest below: {})",
                    lower.min(MAX_ALIGNMENT)
                ),
            ));
        }
        Ok(alignment)
    }

    pub(super) fn identifier(
        &self,
        name: &str,
        span: &Range<usize>,
        what: &str,
        why: &str,
    ) -> Result<()> {
        match identifier_problem(name) {
            None => Ok(()),
            Some(problem) => Err(self.source.error(
                span,
                format!("{what} `{name}` is not a valid Rust identifier: it {problem}"),
                format!(
                    "{why}; use ASCII letters, digits and `_` (for example `{}`), and keep an original name in `source`",
                    crate::model_file::sanitize_identifier(name)
                ),
            )),
        }
    }

    /// A list of tensor names, resolved to indices, with each name's span.
    pub(super) fn references(
        &self,
        value: &Value<'_>,
        names: &Names<'_>,
        what: &str,
    ) -> Result<(Vec<usize>, Vec<Range<usize>>)> {
        let index = names.tensors;
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                format!("{what} must be an array of tensor names"),
                "write it as `[\"a\", \"b\"]`",
            ));
        };
        let mut indices = Vec::with_capacity(items.len());
        let mut spans = Vec::with_capacity(items.len());
        for item in items.iter() {
            let name = self.string(item, &format!("an entry of {what}"))?;
            if names.weights.contains_key(name) {
                return Err(self.source.error(
                    &item.span(),
                    format!("`{name}` in {what} is a weight, not a tensor"),
                    "weights are constants that ops read: name them only in an op's `inputs`; \
                     an op's outputs and scratch, and the graph's inputs and outputs, are \
                     tensors declared under `[tensors]`",
                ));
            }
            let Some(&i) = index.get(name) else {
                return Err(self.source.error(
                    &item.span(),
                    format!("unknown tensor `{name}` in {what}"),
                    format!(
                        "declare `{name}` under `[tensors]`, or fix the name{}",
                        did_you_mean(name, index.keys().copied())
                    ),
                ));
            };
            indices.push(i);
            spans.push(item.span());
        }
        Ok((indices, spans))
    }

    pub(super) fn no_repeats(
        &self,
        list: &(Vec<usize>, Vec<Range<usize>>),
        tensors: &[Tensor],
        what: &str,
    ) -> Result<()> {
        for (i, &t) in list.0.iter().enumerate() {
            if list.0[..i].contains(&t) {
                return Err(self.source.error(
                    &list.1[i],
                    format!("tensor `{}` is listed twice in the {what}", tensors[t].name),
                    "list each tensor once",
                ));
            }
        }
        Ok(())
    }

    /// The dimensions of `what`'s `shape`: integers, none of them zero.
    pub(super) fn dimensions(
        &self,
        value: &Value<'_>,
        what: &str,
        help: &ShapeHelp,
    ) -> Result<Vec<u64>> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                format!("`shape` of {what} is not an array"),
                help.not_array,
            ));
        };
        if let Some(empty) = help.empty
            && items.is_empty()
        {
            return Err(self.source.error(
                &value.span(),
                format!("`shape` of {what} is empty"),
                empty,
            ));
        }
        items
            .iter()
            .map(|item| {
                let dim = self.integer(item, &format!("a dimension of {what}"))?;
                if dim == 0 {
                    return Err(self.source.error(
                        &item.span(),
                        format!("{what} has a zero dimension"),
                        help.zero,
                    ));
                }
                Ok(dim)
            })
            .collect()
    }

    /// `what` (a tensor or a weight) is larger than [`MAX_TENSOR_BYTES`], 2^48 bytes.
    pub(super) fn too_large(&self, span: &Range<usize>, what: &str) -> InputError {
        self.source.error(
            span,
            format!("size overflow: {what} is larger than 2^48 bytes"),
            "check the shape for a typo; no device has that much memory",
        )
    }
}
