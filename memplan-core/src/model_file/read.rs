//! Reading a model file from disk, the one way the `memplan!` macro and the CLI both do it, so
//! that `memplan plan` refuses exactly the files the build refuses.

use std::io::Read as _;
use std::path::Path;

/// The largest model file read: 64 MiB, far above any real model (a 100,000-tensor model is
/// about 10 MiB); anything larger is refused before it is read, by the `memplan!` macro and by
/// the CLI alike.
pub const MAX_MODEL_FILE_BYTES: u64 = 64 << 20;

/// Reads the model file at `path`: only a regular file (a FIFO would block, `/dev/zero` never
/// ends), of at most [`MAX_MODEL_FILE_BYTES`], in UTF-8.
///
/// The error says what is wrong and, after `\n  = help: `, how to fix it; `help_path` is the
/// help for a path that cannot be opened (where it is resolved from differs between callers).
pub fn read_model_file(path: &Path, help_path: &str) -> Result<String, String> {
    // `metadata` follows symlinks and never blocks, unlike opening a FIFO.
    let metadata = std::fs::metadata(path).map_err(|e| format!("{e}\n  = help: {help_path}"))?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(format!(
            "it is {kind}\n  = help: a model is a TOML file; {help_path}"
        ));
    }
    let too_large = || {
        format!(
            "it is larger than {} MiB, the most a model file may be (the `memplan!` macro and \
             `memplan plan` read no more)\n  = help: check the path; split the model, or generate \
             its code from a build script (`memplan_core::expand_model`), which reads the file \
             itself",
            MAX_MODEL_FILE_BYTES >> 20
        )
    };
    if metadata.len() > MAX_MODEL_FILE_BYTES {
        return Err(too_large());
    }
    // Read at most one byte past the cap, in case the file grew since `metadata`.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_MODEL_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{e}\n  = help: {help_path}"))?;
    if bytes.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 (invalid byte at offset {})\n  = help: save the model file as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}
