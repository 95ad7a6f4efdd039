//! Published space savings that our default files (every overhead counted) must match or beat.

/// A published figure for one dataset.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Anchor {
    /// Space saved, percent.
    pub saved_pct: f64,
    /// A stronger figure the same coding reaches with another word width, if any (percent).
    pub alt_saved_pct: Option<f64>,
    /// Where the figure comes from / what it means.
    pub note: &'static str,
}

/// The published figure for `dataset`, if there is one.
pub fn anchor(dataset: &str) -> Option<Anchor> {
    let a = |saved_pct, alt_saved_pct, note| {
        Some(Anchor {
            saved_pct,
            alt_saved_pct,
            note,
        })
    };
    match dataset {
        "cora-features-f32" => a(95.6, None, "Cora features (sparse)"),
        "glove-6b-50d-f32" => a(10.6, None, "GloVe 6B 50d"),
        "minilm-word-emb-f32" => a(12.7, None, "MiniLM word embeddings"),
        "minilm-ffn-up-f32" => a(
            12.4,
            None,
            "MiniLM FFN weight rows (compared with up-projection rows of 384)",
        ),
        "minilm-ffn-down-f32" => a(
            12.4,
            None,
            "MiniLM FFN weight rows (compared with down-projection rows of 1536)",
        ),
        "minilm-kv-k-bf16" => a(
            13.3,
            Some(20.7),
            "MiniLM K bf16, rows of one head (32 el.); 20.7 % with 16-bit words",
        ),
        "minilm-kv-v-bf16" => a(
            22.2,
            Some(23.6),
            "MiniLM V bf16, rows of one head (32 el.); 23.6 % with 16-bit words",
        ),
        "spacy-fi-floret-f32" => a(11.4, None, "spaCy fi floret hashed table"),
        "fashion-mnist-test-f32" => a(
            40.6,
            None,
            "Fashion-MNIST test images as f32 (the published figure is for float images)",
        ),
        "fashion-mnist-test" => a(
            40.6,
            None,
            "Fashion-MNIST test images as u8 (the published figure is for f32 images)",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_issue_anchor_is_present_and_alt_figures_are_stronger() {
        for name in [
            "cora-features-f32",
            "glove-6b-50d-f32",
            "minilm-word-emb-f32",
            "minilm-ffn-up-f32",
            "minilm-kv-k-bf16",
            "minilm-kv-v-bf16",
            "spacy-fi-floret-f32",
            "fashion-mnist-test",
            "fashion-mnist-test-f32",
        ] {
            let a = super::anchor(name).unwrap();
            assert!(a.saved_pct > 0.0 && a.saved_pct < 100.0);
            if let Some(alt) = a.alt_saved_pct {
                assert!(alt > a.saved_pct);
            }
        }
        assert!(super::anchor("minilm-kv-k-f32").is_none());
    }
}
