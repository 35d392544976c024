//! External data: tensors whose data is in another file must name one inside the model's folder.

use crate::weights::{self};
use crate::{ImportError, Importer, fail};

impl<'g> Importer<'g> {
    /// Refuses the model if any tensor with external data (an initializer, or a node's tensor
    /// attribute such as `Constant`'s `value`) names a file outside the model's folder: an
    /// absolute path, or one that `..` or a symlink takes out of it. Otherwise a model could put
    /// any readable file (`/etc/passwd`, a key) into the binary; ONNX Runtime and the `onnx`
    /// package refuse these paths too (CVE-2024-27318, CVE-2024-27319).
    pub(crate) fn check_external_data(&self) -> Result<(), ImportError> {
        let initializers = self
            .graph
            .initializer
            .iter()
            .map(|t| (format!("initializer `{}`", t.name), t));
        let attributes = self.graph.node.iter().flat_map(|node| {
            node.attribute.iter().filter_map(move |a| {
                a.t.as_ref().map(|t| {
                    let node_name = if node.name.is_empty() {
                        node.op_type.as_str()
                    } else {
                        node.name.as_str()
                    };
                    (
                        format!("tensor attribute `{}` of node `{node_name}`", a.name),
                        t,
                    )
                })
            })
        });
        for (what, tensor) in initializers.chain(attributes) {
            if tensor.data_location != 1 {
                continue;
            }
            let location = tensor
                .external_data
                .iter()
                .find(|e| e.key == "location")
                .map(|e| e.value.as_str());
            if let Some(location) = location
                && let Err(reason) = weights::external_path(&self.base_dir, location)
            {
                return fail(format!(
                    "`{}`: {what}: {reason}\n  = help: keep external data files in the ONNX \
                         file's folder (or a subfolder of it) and write `location` relative to \
                         it, as `onnx.save(..., save_as_external_data=True)` does",
                    self.file
                ));
            }
        }
        Ok(())
    }
}
