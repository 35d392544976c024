//! The shape rule of the recurrent layers `LSTM`, `GRU` and `RNN`.

use super::node::{Info, Node, Outputs};

impl Node<'_> {
    /// `Y` (`[seq, directions, batch, hidden]`, or `[batch, seq, directions, hidden]` with
    /// `layout` 1), then the last states `Y_h` (and LSTM's `Y_c`): `[directions, batch, hidden]`
    /// (`[batch, directions, hidden]`).
    pub(super) fn recurrent(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let &[a, b, _] = x.dims.as_slice() else {
            return Err(format!("its input X has rank {}, expected 3", x.rank()));
        };
        let hidden = match self.attr("hidden_size").map(|a| a.i) {
            Some(h) if h >= 0 => h as u64,
            Some(h) => return Err(format!("its hidden_size {h} is negative")),
            // Without the attribute, from R: `[directions, gates * hidden, hidden]`.
            None => match self.input(2)?.dims.as_slice() {
                &[_, _, h] => h,
                other => return Err(format!("its R has shape {other:?}, expected rank 3")),
            },
        };
        let dirs = match self.text("direction", "forward").as_str() {
            "forward" | "reverse" => 1,
            "bidirectional" => 2,
            other => {
                return Err(format!(
                    "direction {other:?} is not forward, reverse or bidirectional"
                ));
            }
        };
        let batch_first = self.int("layout", 0) == 1;
        let (seq, batch) = if batch_first { (b, a) } else { (a, b) };
        let (y, state) = if batch_first {
            (vec![batch, seq, dirs, hidden], vec![batch, dirs, hidden])
        } else {
            (vec![seq, dirs, batch, hidden], vec![dirs, batch, hidden])
        };
        let t = x.elem_type;
        let mut outputs = vec![Ok(Info::new(t, y)), Ok(Info::new(t, state.clone()))];
        if op == "LSTM" {
            outputs.push(Ok(Info::new(t, state)));
        }
        Ok(outputs)
    }
}
