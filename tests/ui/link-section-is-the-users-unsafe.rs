// The generated code places nothing in a linker section (issue 19, item 1): a pool with
// `link_section` is a `static` the application writes, with `#[unsafe(link_section)]`, which
// `forbid(unsafe_code)` refuses. So a model file cannot make safe code write to `.bss.rel.ro`.
#![forbid(unsafe_code)]

memplan::memplan!("link-section-is-the-users-unsafe.toml");

#[unsafe(link_section = ".bss.rel.ro")]
static SRAM: net::sram::Memory = net::sram::Memory::zeroed();

fn main() {
    let _ = net::take(&SRAM);
}
