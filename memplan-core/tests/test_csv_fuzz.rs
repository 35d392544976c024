//! The CSV reader never panics: arbitrary text gives a plan or a located error.
#![cfg(feature = "csv")]

use proptest::prelude::*;

fn csv_like() -> impl Strategy<Value = String> {
    let cell = prop_oneof![
        "[0-9]{1,22}",
        "-?[0-9]{1,3}",
        "[a-z]{0,3}",
        Just(String::new()),
        Just("\"q,\"\"x\"".to_string()),
    ];
    let row = prop::collection::vec(cell, 0..7).prop_map(|cells| cells.join(","));
    let header = prop_oneof![
        Just("id,lower,upper,size".to_string()),
        Just("id,lower,upper,size,alignment".to_string()),
        Just("id,lower,upper,size,offset".to_string()),
        "[a-z,]{0,30}",
    ];
    (header, prop::collection::vec(row, 0..8))
        .prop_map(|(header, rows)| format!("{header}\n{}", rows.join("\n")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn reader_never_panics(text in csv_like()) {
        match memplan_core::read_csv("f.csv", &text) {
            Ok(input) => {
                if let Some(offsets) = &input.offsets {
                    prop_assert_eq!(offsets.len(), input.problem.len());
                }
            }
            Err(e) => {
                prop_assert!(e.line >= 1 && e.column >= 1);
                prop_assert!(!e.message.is_empty() && !e.help.is_empty());
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = memplan_core::read_csv("f.csv", &text);
    }
}
