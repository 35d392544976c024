//! No arena above `MAX_ARENA_BYTES` (issue 19, item 4): a pool's arena is a `static`, and rustc
//! reserves its whole size to compile it, so a 2^48-byte pin in a sized pool was rustc's
//! unlocated `E0080` ("tried to allocate more memory than available to compiler"). memplan
//! refuses it, located at the tensor that ends last in the arena, and the CLI's `plan` with it
//! (one `plan_model`).
#![cfg(feature = "model-file")]

use memplan_core::codegen::{MAX_ARENA_BYTES, plan_model};
use memplan_core::parse_model;

fn plan(text: &str) -> Result<Vec<u64>, memplan_core::InputError> {
    let model = parse_model("model.toml", text).unwrap_or_else(|e| panic!("{e}"));
    plan_model(&model).map(|plan| plan.pools.iter().map(|p| p.arena_size).collect())
}

fn pinned_in_a_pool(offset: u64) -> String {
    format!(
        "[model]\nname = \"net\"\ninputs = [\"x\"]\noutputs = [\"big\"]\n\n\
         [[pools]]\nname = \"main\"\nsize = {}\n\n\
         [tensors]\nx = {{ bytes = 16 }}\n\
         big = {{ bytes = 1024, offset = {offset}, pool = \"main\" }}\n\n\
         [[ops]]\nname = \"expand\"\ninputs = [\"x\"]\noutputs = [\"big\"]\n",
        1u64 << 49
    )
}

fn single(bytes: u64) -> String {
    format!(
        "[model]\nname = \"net\"\ninputs = [\"x\"]\noutputs = [\"big\"]\n\n\
         [tensors]\nx = {{ bytes = 16 }}\nbig = {{ bytes = {bytes} }}\n\n\
         [[ops]]\nname = \"expand\"\ninputs = [\"x\"]\noutputs = [\"big\"]\n"
    )
}

#[test]
fn a_pin_past_the_limit_is_refused_at_the_tensor() {
    let error = plan(&pinned_in_a_pool(1 << 48)).unwrap_err();
    assert_eq!((error.line, error.column), (12, 1), "{error}");
    assert!(
        error
            .message
            .contains("pool `main`'s arena would be 281474976711680 bytes")
            && error
                .message
                .contains("`big`, 1024 bytes pinned at offset 281474976710656")
            && error
                .message
                .contains(&format!("more than the {MAX_ARENA_BYTES} bytes")),
        "{error}"
    );
    assert!(error.help.contains("shrink this tensor"), "{error}");
    // Up to the limit, it plans.
    let arenas = plan(&pinned_in_a_pool(MAX_ARENA_BYTES - 1024)).unwrap();
    assert_eq!(arenas, [MAX_ARENA_BYTES]);
}

#[test]
fn a_single_arena_past_the_limit_is_refused_too() {
    let error = plan(&single(MAX_ARENA_BYTES + 16)).unwrap_err();
    assert_eq!((error.line, error.column), (8, 1), "{error}");
    assert!(
        error.message.starts_with("the arena would be")
            && error.message.contains("its largest tensor: `big`"),
        "{error}"
    );
    assert!(plan(&single(MAX_ARENA_BYTES - 16)).is_ok());
}
