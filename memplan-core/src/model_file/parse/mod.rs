//! Reading a model file: TOML with spans, checked key by key, into a [`Model`].
//!
//! One file per table, each a part of [`Parser`]: `model.rs` (`[model]`, and the file put
//! together), `tensors.rs` (`[tensors]`), `weights.rs` (`[weights]`), `ops.rs` (`[[ops]]`, the
//! schedule and the in-place pairs), `pools.rs` (`[[pools]]`); `values.rs` has the helpers they
//! share (allowed keys, integers, byte counts, names).
//!
//! The tables are walked by hand over `toml`'s spanned `DeTable`, not read into serde-derived
//! types with `toml::Spanned` fields. Deriving was weighed on the smallest table, `[[pools]]`,
//! and not kept: it would add `serde` and `serde_derive` (a proc macro) to every crate that uses
//! `memplan!`, and `toml` with its `serde` feature; serde's own messages for an unknown key or a
//! wrong type ("unknown field `sise`, expected one of `name`, `size`, `link_section`") would have
//! to be caught and rewritten to keep today's (the key's span, what the table takes, a
//! did-you-mean and the fix); and what is left after the schema is most of the code anyway (a
//! pool's name checked as an identifier and against the generated names, sizes as byte counts,
//! link sections, references between tables). Hand-walking keeps one place per message.

use std::collections::BTreeMap;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::InputError;
use crate::model_file::Model;
use crate::model_file::source::SourceText;

mod model;
mod ops;
mod pools;
mod tensors;
mod values;
mod weights;

/// The largest tensor accepted: 2^48 bytes (256 TiB), far beyond any device, small enough that
/// sums over many tensors never overflow.
pub const MAX_TENSOR_BYTES: u64 = 1 << 48;

type Result<T> = std::result::Result<T, InputError>;
type Table<'i> = DeTable<'i>;
type Value<'i> = Spanned<DeValue<'i>>;

/// Parses and checks a model file: the TOML, every key, every name, and the schedule, deriving
/// each tensor's lifetime from the ops (see [`crate::derive_lifetimes`]).
///
/// `file_name` is only used in messages (`model.toml:3:7`). The first problem found is returned
/// as an [`InputError`] that says what is wrong, where, and how to fix it.
///
/// ```
/// let model = memplan_core::parse_model("model.toml", r#"
/// [model]
/// name = "tiny"
/// inputs = ["input"]
/// outputs = ["out"]
///
/// [tensors]
/// input = { dtype = "f32", shape = [1, 4] }
/// out = { dtype = "f32", shape = [1, 4] }
///
/// [[ops]]
/// name = "relu"
/// inputs = ["input"]
/// outputs = ["out"]
/// "#)?;
/// assert_eq!(model.tensors[1].size, 16);
/// assert_eq!(model.to_problem().len(), 2);
/// # Ok::<(), memplan_core::InputError>(())
/// ```
///
/// # Runtime
/// Linear in the file's size, plus `O(t log t)` for `t` tensors.
pub fn parse_model(file_name: &str, text: &str) -> Result<Model> {
    let source = SourceText::new(file_name, text);
    let document = DeTable::parse(text).map_err(|e| syntax_error(&source, &e))?;
    let model = Parser { source }.model(document.get_ref())?;
    // Every name the generated code declares, against every other one (one place for all).
    crate::codegen::names::check(&model)?;
    Ok(model)
}

fn syntax_error(source: &SourceText<'_>, error: &toml::de::Error) -> InputError {
    let span = error.span().unwrap_or(0..0);
    let message = error.message().trim().replace('\n', "; ");
    let help = if message.contains("duplicate key") {
        "each key may appear once per table; rename or remove the second one (tensor and op \
         names must be unique)"
    } else {
        "fix the TOML syntax here (strings in double quotes, arrays in [ ], inline tables in { })"
    };
    source.error(&span, format!("TOML syntax error: {message}"), help)
}

/// The names an op or `[model]` may refer to: tensors and weights.
struct Names<'m> {
    tensors: &'m BTreeMap<&'m str, usize>,
    weights: &'m BTreeMap<&'m str, usize>,
}

struct Parser<'a> {
    source: SourceText<'a>,
}
