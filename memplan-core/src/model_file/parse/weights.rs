//! The `[weights]` table: constants the ops read, named like tensors but never planned.

use std::collections::BTreeMap;

use super::values::{ShapeHelp, in_file_order, typed_bytes};
use super::{Parser, Result, Value};
use crate::model_file::{DType, Weight};

const WEIGHT_KEYS: [&str; 3] = ["dtype", "shape", "source"];

/// A weight's `shape`: like a tensor's, every dimension at least 1, but `[]` (a scalar, one
/// element) is allowed.
const WEIGHT_SHAPE: ShapeHelp = ShapeHelp {
    not_array: "write the dimensions as integers, e.g. `shape = [64, 3, 3, 3]`",
    empty: None,
    zero: "every dimension must be at least 1; a weight with no elements holds nothing, so remove \
           it (and leave the op's input out with `\"\"`, as ONNX writes an absent optional input)",
};

impl Parser<'_> {
    /// `[weights]`: `name = { dtype = "f32", shape = [64, 3, 3, 3], source = "conv1.weight" }`.
    pub(super) fn weights(
        &self,
        value: &Value<'_>,
        tensors: &BTreeMap<&str, usize>,
    ) -> Result<Vec<Weight>> {
        let table = self.table(
            value,
            "`weights`",
            "write `[weights]` as a table: `w = { dtype = \"f32\", shape = [8, 3] }`",
        )?;
        let entries = in_file_order(table);
        let mut weights = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let name: &str = key.get_ref();
            self.identifier(
                name,
                &key.span(),
                "weight name",
                "it names the weight's shape and dtype constants",
            )?;
            if tensors.contains_key(name) {
                return Err(self.source.error(
                    &key.span(),
                    format!("`{name}` is declared both as a tensor and as a weight"),
                    "a name is either an activation tensor (`[tensors]`) or a constant \
                     (`[weights]`), never both; rename one of them",
                ));
            }
            let what = format!("weight `{name}`");
            let table = self.table(
                value,
                &what,
                "write it as `{ dtype = \"f32\", shape = [64, 3, 3, 3], source = \"conv1.weight\" }`",
            )?;
            self.check_keys(table, &WEIGHT_KEYS, &format!("in {what}"), |_| {
                "a weight has `dtype` and `shape`, and optionally `source`; its data stays in the \
                 model it came from"
                    .into()
            })?;
            let Some(dtype_value) = table.get("dtype") else {
                return Err(self.source.error(
                    &key.span(),
                    format!("{what} has no `dtype`"),
                    format!(
                        "add `dtype = \"f32\"` (or one of: {})",
                        DType::known_names()
                    ),
                ));
            };
            let dtype = self.dtype(dtype_value, &what)?;
            let Some(shape_value) = table.get("shape") else {
                return Err(self.source.error(
                    &key.span(),
                    format!("{what} has no `shape`"),
                    "add its dimensions, e.g. `shape = [64, 3, 3, 3]` (`shape = []` for a scalar)",
                ));
            };
            let shape = self.dimensions(shape_value, &what, &WEIGHT_SHAPE)?;
            if typed_bytes(dtype, &shape).is_none() {
                return Err(self.too_large(&shape_value.span(), &what));
            }
            let source = match table.get("source") {
                None => None,
                Some(v) => Some(self.string(v, &format!("`source` of {what}"))?.to_owned()),
            };
            weights.push(Weight {
                name: name.to_owned(),
                dtype,
                shape,
                source,
                location: self.source.location(key.span().start),
            });
        }
        Ok(weights)
    }
}
