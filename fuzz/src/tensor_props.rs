//! The property of the `tensor_files` fuzz target: the `ibp` command's readers of the files it
//! stores (`.npy` and safetensors, `ibp_cli::tensor_io`) on hostile bytes.
//!
//! Input: one selector byte (even: `.npy`, odd: safetensors), then the file. For any input the
//! reader returns a typed error or a result whose every range lies inside the file and matches its
//! shape; a result written back by the matching writer reads again to the same tensors, and a
//! safetensors `__metadata__` object comes back as the same text (the `ibp` command stores it
//! verbatim as a metadata entry, spec 2.7).
//!
//! Depends on `std` and `ibp_cli` only, so that a test binary can include it with `#[path]`.

use ibp_cli::tensor_io::{npy, safetensors, tensor_bytes};

/// Checks the readers on one fuzz input (see the module documentation).
pub fn check_tensor_files(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    if selector % 2 == 0 {
        check_npy(file);
    } else {
        check_safetensors(file);
    }
}

fn check_npy(file: &[u8]) {
    let Ok(h) = npy::parse(file) else { return };
    assert_eq!(
        h.data_offset.checked_add(h.data_len),
        Some(file.len()),
        "npy: the data must end the file"
    );
    assert_eq!(
        tensor_bytes(&h.shape, h.dtype.size()),
        Some(h.data_len as u64),
        "npy: data length and shape disagree"
    );
    let data = &file[h.data_offset..];
    let mut again = Vec::new();
    npy::write(&mut again, h.dtype, &h.shape, data).expect("npy: a parsed header writes back");
    let h2 = npy::parse(&again).expect("npy: the written file reads back");
    assert_eq!(
        (h2.dtype, &h2.shape),
        (h.dtype, &h.shape),
        "npy: round trip changes the header"
    );
    assert!(&again[h2.data_offset..] == data, "npy: round trip changes the data");
}

fn check_safetensors(file: &[u8]) {
    let Ok(st) = safetensors::parse(file) else { return };
    let mut at = st.data_start;
    for t in &st.tensors {
        assert_eq!(t.range.start, at, "safetensors: tensors must tile the data buffer");
        assert!(
            t.range.end <= file.len(),
            "safetensors: tensor '{}' ends past the file",
            t.name
        );
        assert_eq!(
            tensor_bytes(&t.shape, t.dtype.size()),
            Some(t.range.len() as u64),
            "safetensors: tensor '{}': bytes and shape disagree",
            t.name
        );
        at = t.range.end;
    }
    assert_eq!(at, file.len(), "safetensors: bytes after the last tensor");
    let meta_text = st.metadata.as_ref().map(|m| {
        assert!(
            8 <= m.text.start && m.text.end <= st.data_start,
            "safetensors: the metadata text lies outside the header"
        );
        let text = std::str::from_utf8(&file[m.text.clone()]).expect("safetensors: metadata text is UTF-8");
        assert_eq!(
            safetensors::metadata_from_text(text.as_bytes()).ok().as_ref(),
            Some(&m.map),
            "safetensors: the metadata text does not read as the metadata"
        );
        text
    });
    // Written back (the metadata verbatim), it reads as the same tensors and metadata.
    let tensors: Vec<(safetensors::TensorSpec<'_>, &[u8])> = st
        .tensors
        .iter()
        .map(|t| {
            let spec = safetensors::TensorSpec {
                name: &t.name,
                dtype: t.dtype,
                shape: &t.shape,
            };
            (spec, &file[t.range.clone()])
        })
        .collect();
    let mut again = Vec::new();
    safetensors::write(&mut again, &tensors, meta_text).expect("safetensors: a parsed file writes back");
    let st2 = safetensors::parse(&again).expect("safetensors: the written file reads back");
    assert_eq!(
        st2.tensors.len(),
        st.tensors.len(),
        "safetensors: round trip changes the tensors"
    );
    for (a, b) in st.tensors.iter().zip(&st2.tensors) {
        assert_eq!(
            (&a.name, a.dtype, &a.shape),
            (&b.name, b.dtype, &b.shape),
            "safetensors: round trip"
        );
        assert!(
            file[a.range.clone()] == again[b.range.clone()],
            "safetensors: round trip changes '{}'",
            a.name
        );
    }
    let text2 = st2.metadata.as_ref().map(|m| &again[m.text.clone()]);
    assert_eq!(
        text2,
        meta_text.map(str::as_bytes),
        "safetensors: round trip changes the metadata text"
    );
}
