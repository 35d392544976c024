//! Node attributes (`strides`, `axis`, `alpha`, ...): ONNX `AttributeProto`s as plain values, and
//! as TOML for the model file's per-op `attrs` table.
//!
//! A node's attributes are the constants that parameterise its operator: a `Conv`'s strides and
//! pads, a `Softmax`'s axis. The model file carries the scalar and list ones; tensor- and
//! graph-valued attributes (a `Constant`'s value, an `If`'s branches) are not written there: a
//! `Constant` is folded into a weight instead.

use crate::proto;

/// One attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// `INT`.
    Int(i64),
    /// `FLOAT`.
    Float(f32),
    /// `STRING` (ONNX strings are bytes; invalid UTF-8 is replaced).
    Str(String),
    /// `INTS`.
    Ints(Vec<i64>),
    /// `FLOATS`.
    Floats(Vec<f32>),
    /// `STRINGS`.
    Strs(Vec<String>),
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value of `attribute`, or `None` for a tensor-, graph- or type-valued one (or a reference
/// to a function's attribute).
pub(crate) fn value(attribute: &proto::AttributeProto) -> Option<AttrValue> {
    if !attribute.ref_attr_name.is_empty() {
        return None;
    }
    Some(match attribute.r#type {
        1 => AttrValue::Float(attribute.f),
        2 => AttrValue::Int(attribute.i),
        3 => AttrValue::Str(text(&attribute.s)),
        6 => AttrValue::Floats(attribute.floats.clone()),
        7 => AttrValue::Ints(attribute.ints.clone()),
        8 => AttrValue::Strs(attribute.strings.iter().map(|s| text(s)).collect()),
        // Files from old exporters may leave `type` unset: guess from the fields that are set.
        0 if !attribute.ints.is_empty() => AttrValue::Ints(attribute.ints.clone()),
        0 if !attribute.floats.is_empty() => AttrValue::Floats(attribute.floats.clone()),
        0 if !attribute.s.is_empty() => AttrValue::Str(text(&attribute.s)),
        0 if attribute.t.is_none() && attribute.f != 0.0 => AttrValue::Float(attribute.f),
        0 if attribute.t.is_none() => AttrValue::Int(attribute.i),
        _ => return None,
    })
}

/// A float as TOML: `1.0`, `1e-5`, `inf`, `-inf`, `nan`.
fn float(value: f32) -> String {
    if value.is_nan() {
        "nan".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        // `{:?}` is the shortest text that reads back to the same f32, with a `.` or an `e`.
        format!("{value:?}")
    }
}

/// A TOML basic string (memplan-core's, which writes the model files it reads back).
pub(crate) use memplan_core::model_file::toml_string as quote;

/// A TOML key: bare when it can be, quoted otherwise.
pub(crate) fn key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { name.to_owned() } else { quote(name) }
}

impl AttrValue {
    /// The value as a TOML value.
    pub fn to_toml(&self) -> String {
        let list = |items: Vec<String>| format!("[{}]", items.join(", "));
        match self {
            Self::Int(i) => i.to_string(),
            Self::Float(f) => float(*f),
            Self::Str(s) => quote(s),
            Self::Ints(v) => list(v.iter().map(i64::to_string).collect()),
            Self::Floats(v) => list(v.iter().map(|&f| float(f)).collect()),
            Self::Strs(v) => list(v.iter().map(|s| quote(s)).collect()),
        }
    }
}

/// `{ strides = [2, 2], group = 1 }`.
pub(crate) fn table(attrs: &[(String, AttrValue)]) -> String {
    if attrs.is_empty() {
        return "{}".to_owned();
    }
    let entries: Vec<String> = attrs
        .iter()
        .map(|(name, value)| format!("{} = {}", key(name), value.to_toml()))
        .collect();
    format!("{{ {} }}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_toml_that_reads_back() {
        let attrs = vec![
            ("strides".to_owned(), AttrValue::Ints(vec![2, 2])),
            ("alpha".to_owned(), AttrValue::Float(0.2)),
            ("epsilon".to_owned(), AttrValue::Float(1e-5)),
            ("one".to_owned(), AttrValue::Float(1.0)),
            ("max".to_owned(), AttrValue::Float(f32::INFINITY)),
            ("mode".to_owned(), AttrValue::Str("a\"b".to_owned())),
            ("none".to_owned(), AttrValue::Ints(vec![])),
            ("odd key".to_owned(), AttrValue::Strs(vec!["x".to_owned()])),
        ];
        let text = table(&attrs);
        assert_eq!(
            text,
            r#"{ strides = [2, 2], alpha = 0.2, epsilon = 1e-5, one = 1.0, max = inf, mode = "a\"b", none = [], "odd key" = ["x"] }"#
        );
    }
}
