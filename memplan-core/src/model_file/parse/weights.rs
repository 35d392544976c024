//! The `[weights]` table: constants the ops read, named like tensors but never planned.

use std::collections::BTreeMap;

use toml::de::DeValue;

use super::{MAX_TENSOR_BYTES, Parser, Result, Value};
use crate::model_file::{DType, Weight};

const WEIGHT_KEYS: [&str; 3] = ["dtype", "shape", "source"];

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
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
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
            let DeValue::Array(items) = shape_value.get_ref() else {
                return Err(self.source.error(
                    &shape_value.span(),
                    format!("`shape` of {what} is not an array"),
                    "write the dimensions as integers, e.g. `shape = [64, 3, 3, 3]`",
                ));
            };
            // Like a tensor's: every dimension at least 1 (`[]`, a scalar, is one element).
            let shape = items
                .iter()
                .map(|item| {
                    let dim = self.integer(item, &format!("a dimension of {what}"))?;
                    if dim == 0 {
                        return Err(self.source.error(
                            &item.span(),
                            format!("{what} has a zero dimension"),
                            "every dimension must be at least 1; a weight with no elements holds \
                             nothing, so remove it (and leave the op's input out with `\"\"`, as \
                             ONNX writes an absent optional input)",
                        ));
                    }
                    Ok(dim)
                })
                .collect::<Result<Vec<u64>>>()?;
            let fits = shape
                .iter()
                .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
                .is_some_and(|bytes| bytes <= MAX_TENSOR_BYTES);
            if !fits {
                return Err(self.source.error(
                    &shape_value.span(),
                    format!("size overflow: {what} is larger than 2^48 bytes"),
                    "check the shape for a typo; no device has that much memory",
                ));
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
