//! The `[tensors]` table: each activation tensor's dtype and shape (or bytes), alignment, and
//! where its memory is (`pool`, `offset`, `external`).

use std::ops::Range;

use super::values::{ShapeHelp, in_file_order, typed_bytes};
use super::{MAX_TENSOR_BYTES, Parser, Result, Table, Value};
use crate::model::Lifetime;
use crate::model_file::source::did_you_mean;
use crate::model_file::{DType, Layout, PoolDecl, Tensor, TensorMemory};

/// The largest sum of all tensor sizes accepted (2^60 bytes).
const MAX_TOTAL_BYTES: u64 = 1 << 60;

const TENSOR_KEYS: [&str; 8] = [
    "dtype", "shape", "bytes", "align", "source", "pool", "offset", "external",
];

/// A tensor's `shape`: at least one dimension.
const TENSOR_SHAPE: ShapeHelp = ShapeHelp {
    not_array: "write the dimensions as positive integers, e.g. `shape = [1, 8, 26, 26]`",
    empty: Some("give at least one dimension; write a scalar as `shape = [1]`"),
    zero: "every dimension must be at least 1; a tensor with no elements needs no memory, so remove it",
};

impl Parser<'_> {
    pub(super) fn tensors(
        &self,
        value: &Value<'_>,
        model_alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<(Vec<Tensor>, Vec<Range<usize>>)> {
        let table = self.table(
            value,
            "`tensors`",
            "write `[tensors]` as a table of tensors",
        )?;
        let entries = in_file_order(table);
        let mut tensors = Vec::with_capacity(entries.len());
        let mut spans = Vec::with_capacity(entries.len());
        let mut total: u64 = 0;
        for (key, value) in entries {
            let name: &str = key.get_ref();
            self.identifier(
                name,
                &key.span(),
                "tensor name",
                "it names the tensor's accessor",
            )?;
            let tensor = self.tensor(name, &key.span(), value, model_alignment, pools)?;
            total = total.saturating_add(tensor.size.next_multiple_of(tensor.alignment));
            if total > MAX_TOTAL_BYTES {
                return Err(self.source.error(
                    &key.span(),
                    "size overflow: the tensors together need more than 2^60 bytes",
                    "check the shapes for a typo; no device has that much memory",
                ));
            }
            tensors.push(tensor);
            spans.push(key.span());
        }
        if tensors.is_empty() {
            return Err(self.source.error(
                &value.span(),
                "`[tensors]` is empty",
                "declare every activation tensor, e.g. `input = { dtype = \"f32\", shape = [1, 28, 28] }`",
            ));
        }
        Ok((tensors, spans))
    }

    pub(super) fn tensor(
        &self,
        name: &str,
        key_span: &Range<usize>,
        value: &Value<'_>,
        model_alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<Tensor> {
        let what = format!("tensor `{name}`");
        let table = self.table(
            value,
            &what,
            "write it as `{ dtype = \"f32\", shape = [1, 8] }` or `{ bytes = 4096 }`",
        )?;
        self.check_keys(table, &TENSOR_KEYS, &format!("in {what}"), |_| {
            "a tensor has `dtype` and `shape`, or `bytes`; and optionally `align`, `source`, \
             `pool`, `offset` and `external`"
                .into()
        })?;
        let (layout, size, natural_alignment) = match (
            table.get("dtype"),
            table.get("shape"),
            table.get("bytes"),
        ) {
            (Some(_), _, Some(bytes)) | (_, Some(_), Some(bytes)) => {
                return Err(self.source.error(
                    &bytes.span(),
                    format!("{what} has both `bytes` and `dtype`/`shape`"),
                    "give either `dtype` and `shape` (a typed tensor) or `bytes` (raw bytes), not both",
                ));
            }
            (None, None, Some(bytes)) => {
                let size = self.byte_count(bytes, &format!("`bytes` of {what}"))?;
                if size == 0 {
                    return Err(self.source.error(
                        &bytes.span(),
                        format!("{what} has `bytes = 0`"),
                        "every tensor needs at least one byte; remove the tensor if it is unused",
                    ));
                }
                if size > MAX_TENSOR_BYTES {
                    return Err(self.too_large(&bytes.span(), &what));
                }
                (Layout::Bytes, size, 1)
            }
            (Some(dtype_value), Some(shape_value), None) => {
                let dtype = self.dtype(dtype_value, &what)?;
                let shape = self.dimensions(shape_value, &what, &TENSOR_SHAPE)?;
                let elements = typed_bytes(dtype, &shape)
                    .ok_or_else(|| self.too_large(&shape_value.span(), &what))?;
                (Layout::Typed { dtype, shape }, elements, dtype.alignment())
            }
            (None, Some(shape), None) => {
                return Err(self.source.error(
                    &shape.span(),
                    format!("{what} has a `shape` but no `dtype`"),
                    format!(
                        "add `dtype = \"f32\"` (or one of: {})",
                        DType::known_names()
                    ),
                ));
            }
            (Some(dtype), None, None) => {
                return Err(self.source.error(
                    &dtype.span(),
                    format!("{what} has a `dtype` but no `shape`"),
                    "add its dimensions, e.g. `shape = [1, 8, 26, 26]`",
                ));
            }
            (None, None, None) => {
                return Err(self.source.error(
                    key_span,
                    format!("{what} has neither `dtype`/`shape` nor `bytes`"),
                    "write it as `{ dtype = \"f32\", shape = [1, 8] }` or `{ bytes = 4096 }`",
                ));
            }
        };
        let alignment = match table.get("align") {
            None => model_alignment,
            Some(v) => self.alignment(v, &format!("`align` of {what}"))?,
        };
        let source = match table.get("source") {
            None => None,
            Some(v) => Some(self.string(v, &format!("`source` of {what}"))?.to_owned()),
        };
        let alignment = alignment.max(natural_alignment);
        let memory = self.tensor_memory(&what, table, size, alignment, pools)?;
        Ok(Tensor {
            name: name.to_owned(),
            layout,
            size,
            alignment,
            source,
            lifetime: Lifetime::new(0, 1),
            location: self.source.location(key_span.start),
            memory,
        })
    }

    /// `pool`, `offset` and `external` of a tensor.
    pub(super) fn tensor_memory(
        &self,
        what: &str,
        table: &Table<'_>,
        size: u64,
        alignment: u64,
        pools: &[PoolDecl],
    ) -> Result<TensorMemory> {
        let external = match table.get("external") {
            None => false,
            Some(v) => self.boolean(v, &format!("`external` of {what}"))?,
        };
        if external {
            for key in ["pool", "offset"] {
                if let Some(v) = table.get(key) {
                    return Err(self.source.error(
                        &v.span(),
                        format!("{what} is `external` but also has `{key}`"),
                        format!(
                            "an external tensor is owned by the application and has no place in \
                             an arena; remove `{key}` or `external`"
                        ),
                    ));
                }
            }
        }
        let pool = match table.get("pool") {
            None => None,
            Some(v) => {
                let name = self.string(v, &format!("`pool` of {what}"))?;
                let Some(index) = pools.iter().position(|p| p.name == name) else {
                    let help = if pools.is_empty() {
                        format!(
                            "declare the pool first: `[[pools]]` with `name = \"{name}\"` (and \
                             optionally `size`), or remove `pool`"
                        )
                    } else {
                        format!(
                            "use one of the `[[pools]]`: {}{}",
                            pools
                                .iter()
                                .map(|p| format!("`{}`", p.name))
                                .collect::<Vec<_>>()
                                .join(", "),
                            did_you_mean(name, pools.iter().map(|p| p.name.as_str()))
                        )
                    };
                    return Err(self.source.error(
                        &v.span(),
                        format!("unknown pool `{name}` in {what}"),
                        help,
                    ));
                };
                Some(index)
            }
        };
        let offset = match table.get("offset") {
            None => None,
            Some(v) => {
                let offset = self.byte_count(v, &format!("`offset` of {what}"))?;
                if offset % alignment != 0 {
                    return Err(self.source.error(
                        &v.span(),
                        format!(
                            "{what} is pinned at offset {offset}, which is not a multiple of its \
                             alignment {alignment}"
                        ),
                        format!(
                            "pin it at a multiple of {alignment} (for example {}), or lower its \
                             `align`",
                            offset / alignment * alignment
                        ),
                    ));
                }
                let home = pool.or(if pools.is_empty() { None } else { Some(0) });
                let end = offset.checked_add(size).filter(|&e| e <= MAX_TOTAL_BYTES);
                let capacity = home.and_then(|p| pools[p].capacity.map(|c| (p, c)));
                match (end, capacity) {
                    (None, _) => {
                        return Err(self.source.error(
                            &v.span(),
                            format!("size overflow: {what} pinned at offset {offset} ends past 2^60 bytes"),
                            "check the offset for a typo",
                        ));
                    }
                    (Some(end), Some((p, capacity))) if end > capacity => {
                        return Err(self.source.error(
                            &v.span(),
                            format!(
                                "{what} pinned at offset {offset} ends at byte {end}, past the \
                                 {capacity} bytes of pool `{}`",
                                pools[p].name
                            ),
                            format!(
                                "pin it at most at {} or raise the pool's `size`",
                                capacity.saturating_sub(size) / alignment * alignment
                            ),
                        ));
                    }
                    _ => {}
                }
                Some(offset)
            }
        };
        Ok(TensorMemory {
            pool,
            offset,
            external,
        })
    }
}
