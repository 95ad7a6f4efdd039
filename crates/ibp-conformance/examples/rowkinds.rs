//! Prints, per valid vector, each chunk's W, A, G and its raw/coded row counts.
use ibp_codec::ContainerReader;
fn main() {
    let root = ibp_conformance::conformance_dir();
    let m = ibp_conformance::runner::load_manifest(&root).unwrap();
    for rec in m.vectors.iter().filter(|r| r.id.starts_with("v-")) {
        let bytes = std::fs::read(root.join(&rec.file)).unwrap();
        let mut r = ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
        let mut parts = Vec::new();
        for e in 0..r.entries().len() {
            for c in 0..r.entries()[e].chunks.len() {
                let meta = r.chunk_meta(e, c).unwrap();
                let raw = (0..meta.row_count as usize).filter(|&i| meta.is_raw(i)).count();
                parts.push(format!(
                    "W{} A{} G{} raw {}/{}",
                    meta.word_width.bits(),
                    meta.align(),
                    meta.group_count,
                    raw,
                    meta.row_count
                ));
            }
        }
        println!("{} {}", rec.id, parts.join("; "));
    }
}
