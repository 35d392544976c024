//! A QEMU TCG plugin that counts the guest instructions executed during the whole run and
//! prints `insns <count>` through QEMU's log when the emulation ends.
//!
//! Debian's QEMU 7.2 is built with plugin support but ships none of QEMU's example plugins
//! (no `libinsn.so`), so this crate is the instruction counter: build it for the host and pass
//! the library to QEMU:
//!
//! ```text
//! cargo build --release --target host-tuple
//! qemu-system-arm ... -icount shift=0 -plugin target/<host>/release/libmemplan_qemu_insn_count.so -d plugin ...
//! ```
//!
//! `-d plugin` sends the plugin's output to QEMU's log (stderr, or the file given with `-D`).
//!
//! It speaks version 1 of the plugin API, QEMU 7.2's; a QEMU whose plugin API has moved on may
//! refuse it (QEMU 9 removed the inline call it uses). Every instruction gets an inline add on one 64-bit counter, so the
//! count is exact even when an exception ends a translation block early. The guest has one
//! vCPU, so one counter needs no atomics; with `-icount` the run, interrupts included, is
//! deterministic and so is the count.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// QEMU's `qemu_plugin_id_t`.
type PluginId = u64;

/// QEMU's opaque `struct qemu_plugin_tb`, a translation block being translated.
#[repr(C)]
pub struct QemuPluginTb {
    _opaque: [u8; 0],
}

/// QEMU's opaque `struct qemu_plugin_insn`, one guest instruction of a translation block.
#[repr(C)]
pub struct QemuPluginInsn {
    _opaque: [u8; 0],
}

/// `QEMU_PLUGIN_INLINE_ADD_U64` of `enum qemu_plugin_op`: `*ptr += imm`, done by generated code.
const QEMU_PLUGIN_INLINE_ADD_U64: c_int = 0;

/// The plugin API version this plugin was written for; QEMU refuses a plugin outside its range.
#[unsafe(no_mangle)]
pub static qemu_plugin_version: c_int = 1;

/// Instructions executed so far. QEMU's generated code adds to it directly, not through the
/// atomic; it is an atomic only so Rust may share it and read it at exit.
static INSNS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" {
    fn qemu_plugin_register_vcpu_tb_trans_cb(
        id: PluginId,
        cb: extern "C" fn(PluginId, *mut QemuPluginTb),
    );
    fn qemu_plugin_tb_n_insns(tb: *const QemuPluginTb) -> usize;
    fn qemu_plugin_tb_get_insn(tb: *const QemuPluginTb, idx: usize) -> *mut QemuPluginInsn;
    fn qemu_plugin_register_vcpu_insn_exec_inline(
        insn: *mut QemuPluginInsn,
        op: c_int,
        ptr: *mut c_void,
        imm: u64,
    );
    fn qemu_plugin_register_atexit_cb(
        id: PluginId,
        cb: extern "C" fn(PluginId, *mut c_void),
        userdata: *mut c_void,
    );
    fn qemu_plugin_outs(string: *const c_char);
}

/// At each translation: one inline `INSNS += 1` per instruction of the block.
extern "C" fn on_translation(_id: PluginId, tb: *mut QemuPluginTb) {
    // SAFETY: QEMU passes a block being translated, valid during this callback, and its
    // instructions for indices below `qemu_plugin_tb_n_insns`; `INSNS` is a static, so the
    // pointer the generated code adds to stays valid for the whole run.
    unsafe {
        for idx in 0..qemu_plugin_tb_n_insns(tb) {
            let insn = qemu_plugin_tb_get_insn(tb, idx);
            qemu_plugin_register_vcpu_insn_exec_inline(
                insn,
                QEMU_PLUGIN_INLINE_ADD_U64,
                INSNS.as_ptr().cast(),
                1,
            );
        }
    }
}

/// At exit: prints the total.
extern "C" fn on_exit(_id: PluginId, _userdata: *mut c_void) {
    let line = format!("insns {}\n\0", INSNS.load(Ordering::Relaxed));
    // SAFETY: `line` is NUL-terminated and outlives the call, which copies it.
    unsafe { qemu_plugin_outs(line.as_ptr().cast()) }
}

/// The plugin's entry point, called by QEMU once when it loads the library.
///
/// # Safety
///
/// Called by QEMU only, with the id it gave this plugin.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qemu_plugin_install(
    id: PluginId,
    _info: *const c_void,
    _argc: c_int,
    _argv: *const *const c_char,
) -> c_int {
    // SAFETY: `id` is this plugin's, as QEMU passed it; the callbacks are `extern "C"` functions
    // with the signatures the API declares and live as long as the library.
    unsafe {
        qemu_plugin_register_vcpu_tb_trans_cb(id, on_translation);
        qemu_plugin_register_atexit_cb(id, on_exit, std::ptr::null_mut());
    }
    0
}
