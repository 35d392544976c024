//! Removing `value_info` from an ONNX file, field by field (for tests and for checking what
//! the importer infers against a file's own shapes).

/// A model as an exporter that does not run shape inference writes it: `bytes` (an ONNX file)
/// with the graph's `value_info` removed and, with `outputs`, the graph outputs' types too.
/// Every other byte is kept as it is (the protobuf is edited field by field, not decoded and
/// written again). For tests and for checking what the importer infers against a file's own
/// shapes.
pub fn strip_value_info(bytes: &[u8], outputs: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(bytes.len());
    for field in fields(bytes)? {
        if field.number == 7 && field.wire == 2 {
            // ModelProto.graph
            let mut graph = Vec::with_capacity(field.body.len());
            for g in fields(field.body)? {
                match (g.number, g.wire) {
                    // GraphProto.value_info
                    (13, 2) => {}
                    // GraphProto.output: keep the name only.
                    (12, 2) if outputs => {
                        let mut info = Vec::new();
                        for f in fields(g.body)? {
                            if f.number == 1 {
                                info.extend_from_slice(f.whole);
                            }
                        }
                        put_field(&mut graph, 12, &info);
                    }
                    _ => graph.extend_from_slice(g.whole),
                }
            }
            put_field(&mut out, 7, &graph);
        } else {
            out.extend_from_slice(field.whole);
        }
    }
    Ok(out)
}

/// One protobuf field: its number, wire type, bytes (key included) and, for a length-delimited
/// one, its body.
struct Field<'b> {
    number: u64,
    wire: u8,
    whole: &'b [u8],
    body: &'b [u8],
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or("truncated varint")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint longer than 10 bytes".to_owned())
}

fn fields(bytes: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let key = varint(bytes, &mut at)?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let body_start;
        match wire {
            0 => {
                varint(bytes, &mut at)?;
                body_start = at;
            }
            1 => {
                at += 8;
                body_start = at;
            }
            2 => {
                let len = varint(bytes, &mut at)?;
                body_start = at;
                at = at
                    .checked_add(usize::try_from(len).map_err(|_| "length too large")?)
                    .ok_or("length too large")?;
            }
            5 => {
                at += 4;
                body_start = at;
            }
            w => return Err(format!("wire type {w} is not supported")),
        }
        if at > bytes.len() {
            return Err("truncated field".to_owned());
        }
        let body = if wire == 2 {
            &bytes[body_start..at]
        } else {
            &[][..]
        };
        out.push(Field {
            number,
            wire,
            whole: &bytes[start..at],
            body,
        });
    }
    Ok(out)
}

fn put_field(out: &mut Vec<u8>, number: u64, body: &[u8]) {
    let mut put = |mut v: u64| loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    };
    put(number << 3 | 2);
    put(body.len() as u64);
    out.extend_from_slice(body);
}
