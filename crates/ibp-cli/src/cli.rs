//! The command line (clap derive). Each subcommand's arguments are a plain struct, so other code
//! and tests can run a command without a process ([`crate::commands`]).

use clap::{Args, Parser, Subcommand, ValueEnum};
use ibp_format::WordWidth;
use std::path::PathBuf;

/// Exit codes, shown in `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success (verify: every check passed)
  1  usage error: bad arguments or values, unknown entry, row out of range, output exists
  2  bad input: corrupt or truncated .ibp (an E_* code of the spec), malformed or unsupported
     .npy/.safetensors; verify found damage
  3  I/O error: a file cannot be opened, read, written, synced or renamed
  4  GPU error (verify --gpu): no usable GPU, or a CUDA call or kernel compile failed

Errors are one line on stderr: `error: FILE: CODE: what and where`.";

/// Invariant Bit Packing: store .npy and safetensors tensors losslessly as .ibp containers.
#[derive(Debug, Parser)]
#[command(name = "ibp", version, after_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
    /// Worker threads for encoding and decoding (default: one per core).
    #[arg(short = 'j', long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// No progress bars, notes or summaries on stderr (errors are still printed).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Reading .ibp files: the most decoded bytes held at once (one chunk, or the rows of
    /// `--rows`), e.g. 512M or 16G. A file that needs more is refused with E_LIMIT (exit 2).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size, default_value = "16G")]
    pub max_memory: u64,
    /// Reading .ibp files: the most rows one `--rows` extraction may request (E_LIMIT beyond).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), default_value = "16777216")]
    pub max_rows: u64,
}

impl Cli {
    /// The reader limits the options set (spec 10.2); the directory limit keeps its default.
    pub fn reader_limits(&self) -> ibp_codec::Limits {
        ibp_codec::Limits {
            max_output_bytes: self.max_memory,
            max_gather_rows: self.max_rows,
            ..ibp_codec::Limits::default()
        }
    }
}

/// A byte count: a whole number with an optional binary suffix K, M, G or T (`KiB`, `MB`, ... are
/// read the same way).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a size such as 4096, 512M or 16G"))?;
    let shift = match suffix
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches('B')
        .trim_end_matches('I')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("'{s}': unknown size suffix (use K, M, G or T)")),
    };
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{s}' is too large"))?;
    if bytes == 0 {
        return Err("a size of 0 bytes allows nothing".into());
    }
    Ok(bytes)
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compress a .npy file, a .safetensors file or a folder of them into one .ibp file.
    #[command(after_help = EXIT_CODES)]
    Compress(CompressArgs),
    /// Restore tensors from a .ibp file as .npy, .safetensors or a folder; or extract entries/rows.
    #[command(after_help = EXIT_CODES)]
    Decompress(DecompressArgs),
    /// Summarise a .ibp file: entries, dtypes, shapes, chunks, word widths, groups, invariant
    /// bits, raw rows and space saved.
    #[command(after_help = EXIT_CODES)]
    Inspect(InspectArgs),
    /// Check every CRC and decode every row; report each damaged chunk (exit 2 if any).
    #[command(after_help = EXIT_CODES)]
    Verify(VerifyArgs),
    /// Measure CPU encode/decode throughput and ratio of a file next to a memcpy of its bytes.
    #[command(after_help = EXIT_CODES)]
    Bench(BenchArgs),
    /// Compress, decompress and verify the small real dataset embedded in the binary (data/ in the
    /// repository), printing sizes and the space saved.
    Demo,
}

/// Word width choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WordWidthArg {
    /// Try every width (a row's last word may be partial) and keep the smallest result, per chunk.
    Auto,
    /// 8-bit words.
    #[value(name = "8")]
    W8,
    /// 16-bit words.
    #[value(name = "16")]
    W16,
    /// 32-bit words.
    #[value(name = "32")]
    W32,
    /// 64-bit words.
    #[value(name = "64")]
    W64,
}

impl WordWidthArg {
    /// The fixed width, `None` for auto.
    pub fn width(self) -> Option<WordWidth> {
        match self {
            WordWidthArg::Auto => None,
            WordWidthArg::W8 => Some(WordWidth::W8),
            WordWidthArg::W16 => Some(WordWidth::W16),
            WordWidthArg::W32 => Some(WordWidth::W32),
            WordWidthArg::W64 => Some(WordWidth::W64),
        }
    }
}

/// `auto` or a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoF64(pub Option<f64>);

/// `None` for the keyword `word` (any case), else the number `s` is.
fn number_or(s: &str, word: &str) -> Result<Option<f64>, String> {
    if s.eq_ignore_ascii_case(word) {
        return Ok(None);
    }
    s.parse()
        .map(Some)
        .map_err(|_| format!("'{s}' is not a number or '{word}'"))
}

fn parse_auto_f64(s: &str) -> Result<AutoF64, String> {
    match number_or(s, "auto")? {
        Some(v) if !v.is_finite() => Err(format!("'{s}' is not finite")),
        v => Ok(AutoF64(v)),
    }
}

/// `--fewer-runs-within`: a fraction in [0, 1], or off (`None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunsWithin(pub Option<f64>);

fn parse_runs_within(s: &str) -> Result<RunsWithin, String> {
    match number_or(s, "off")? {
        Some(v) if !(0.0..=1.0).contains(&v) => Err(format!("{v} is not in [0, 1]")),
        v => Ok(RunsWithin(v)),
    }
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not in (0, 1]"))
    }
}

fn parse_align(s: &str) -> Result<u8, String> {
    let v: u32 = s.parse().map_err(|_| format!("'{s}' is not a number of bytes"))?;
    if (1..=128).contains(&v) && v.is_power_of_two() {
        Ok(v.trailing_zeros() as u8)
    } else {
        Err(format!("{v} is not a power of two from 1 to 128"))
    }
}

/// `ibp compress`.
#[derive(Debug, Clone, Args)]
pub struct CompressArgs {
    /// Input: a .npy file, a .safetensors file, or a folder (searched recursively for both).
    pub input: PathBuf,
    /// Output .ibp file [default: the input with its extension replaced by .ibp].
    #[arg(short, long, value_name = "OUT.ibp")]
    pub output: Option<PathBuf>,
    /// Word width in bits.
    ///
    /// auto (the smallest size) also suits files decoded on a GPU: 32-bit float rows of 1.2-1.5 KiB
    /// with the 32-bit words auto picks decode at 0.51-0.56 of a device-to-device copy against
    /// 0.48-0.53 with 64-bit words, and save 1-1.5 points more space (H200, bench/GPU_NOTES.md
    /// entry 42).
    #[arg(long, value_enum, default_value = "auto")]
    pub word_width: WordWidthArg,
    /// Invariance threshold in (0.5, 1], or auto (sweep 0.70..0.95 and exact; keep the smallest).
    #[arg(long, default_value = "auto", value_parser = parse_auto_f64, value_name = "T|auto")]
    pub threshold: AutoF64,
    /// Estimate the masks from this fraction of each chunk's rows, in (0, 1] [default: all rows].
    #[arg(long, value_parser = parse_fraction, value_name = "F")]
    pub sample_fraction: Option<f64>,
    /// Mask/Bitval groups per chunk, 1..=256.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub groups: u32,
    /// Rows per chunk, 1..=1048576 [default: about 8 MiB of raw bytes per chunk].
    #[arg(long, value_name = "ROWS", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub chunk_rows: Option<u32>,
    /// Row alignment in bytes: 1, 2, 4, ..., 128 (1 is smallest; 16 suits 16-byte GPU loads)
    /// [default: 1, or 16 with --gpu].
    #[arg(long, value_parser = parse_align, value_name = "BYTES")]
    pub align: Option<u8>,
    /// Encode for GPU gathers and decoding: 16-byte alignment, chunks judged by what a GPU gather
    /// reads (32-byte sectors and 64-byte requests: a chunk whose coded records are not cheaper to
    /// read than raw rows is stored raw).
    #[arg(long)]
    pub gpu: bool,
    /// Positions whose free bits form more than two runs get the bits between runs freed until
    /// they form at most two (else three), where a chunk grows by at most this fraction, in
    /// [0, 1]; GPU decoders decode such chunks faster. off: the smallest masks [default: 0.001].
    #[arg(long, value_parser = parse_runs_within, value_name = "FRACTION|off")]
    pub fewer_runs_within: Option<RunsWithin>,
    /// Rows are the sub-tensors below dimension K: rows = `product(shape[..K])`. Default: K = 1
    /// (`shape[0]` rows) after leading size-1 dimensions; vectors are cut into equal segments
    /// sized to balance mask overhead (README, "Rows").
    #[arg(long, value_name = "K")]
    pub row_dim: Option<usize>,
    /// Replace the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// Output file kind of `decompress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputKind {
    /// One .npy file (one entry).
    Npy,
    /// One .safetensors file (any number of entries).
    Safetensors,
    /// A folder mirroring a compressed folder.
    Folder,
}

/// Which CPU decoder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecoderArg {
    /// The word-at-a-time decoder.
    Fast,
    /// The bit-by-bit reference decoder.
    Oracle,
}

impl DecoderArg {
    /// The codec's decoder kind.
    pub fn kind(self) -> ibp_codec::DecoderKind {
        match self {
            DecoderArg::Fast => ibp_codec::DecoderKind::Fast,
            DecoderArg::Oracle => ibp_codec::DecoderKind::Oracle,
        }
    }
}

/// `ibp decompress`.
#[derive(Debug, Clone, Args)]
pub struct DecompressArgs {
    /// The .ibp file.
    pub input: PathBuf,
    /// Output path [default: the input without .ibp, plus .npy, .safetensors or nothing (folder)].
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output kind [default: from OUT's extension; else a folder when the entries came from one,
    /// .npy for one entry, .safetensors for several].
    #[arg(long = "as", value_enum, value_name = "KIND")]
    pub output_kind: Option<OutputKind>,
    /// Only this entry (repeat for several).
    #[arg(long, value_name = "NAME")]
    pub entry: Vec<String>,
    /// Only these rows of the (single) entry, e.g. `10..20,35` (decodes only those rows).
    #[arg(long, value_name = "LIST", value_parser = crate::rows::RowSelection::parse)]
    pub rows: Option<crate::rows::RowSelection>,
    /// Decoder.
    #[arg(long, value_enum, default_value = "fast")]
    pub decoder: DecoderArg,
    /// Replace the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// `ibp inspect`.
#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// The .ibp file.
    pub input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// List every chunk (text output).
    #[arg(long)]
    pub chunks: bool,
}

/// `ibp verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The .ibp file.
    pub input: PathBuf,
    /// Also decode with the bit-by-bit oracle decoder and require both decoders to agree.
    #[arg(long)]
    pub oracle: bool,
    /// Also decode every chunk on the GPU (CUDA, kernels compiled at run time by NVRTC) and require
    /// its bytes to equal the CPU decoder's. Without a usable GPU: exit 4 before the file is read.
    #[arg(long)]
    pub gpu: bool,
    /// The GPU `--gpu` uses (CUDA device ordinal).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "gpu")]
    pub device: usize,
    /// Where `--gpu` keeps an entry's compressed payload while the GPU decodes it: in device
    /// memory, or in pinned host memory read by the kernels over the bus (zero-copy).
    #[arg(long, value_enum, value_name = "WHERE", default_value_t = GpuPayloadArg::Device, requires = "gpu")]
    pub gpu_payload: GpuPayloadArg,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Where `verify --gpu` keeps an entry's compressed payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuPayloadArg {
    /// In device memory (a compressed GPU cache).
    Device,
    /// In page-locked host memory mapped for the device (zero-copy reads over PCIe).
    Host,
}

/// `ibp bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// A .npy, .safetensors or .ibp file (or a folder of tensor files).
    pub input: PathBuf,
    /// Timed repetitions of each measurement (the median is reported) [default: as many as fit
    /// in about a second, 3 to 20].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub iters: Option<u32>,
    /// Skip the (slow) oracle decoder.
    #[arg(long)]
    pub no_oracle: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes_and_refuse_nonsense() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("2tb"), Ok(2 << 40));
        for bad in ["", "0", "G", "12Q", "-5", "1.5G", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn limits_follow_the_options() {
        let cli = Cli::try_parse_from(["ibp", "--max-memory", "2M", "--max-rows", "7", "verify", "x.ibp"]).unwrap();
        let l = cli.reader_limits();
        assert_eq!((l.max_output_bytes, l.max_gather_rows), (2 << 20, 7));
        let d = Cli::try_parse_from(["ibp", "verify", "x.ibp"]).unwrap().reader_limits();
        assert_eq!(d, ibp_codec::Limits::default());
    }

    #[test]
    fn fewer_runs_within_defaults_to_the_encoders_and_can_be_turned_off() {
        let options = |extra: &[&str]| {
            let args = ["ibp", "compress", "x.npy"].iter().chain(extra).copied();
            match Cli::try_parse_from(args).unwrap().command {
                Command::Compress(c) => crate::commands::compress::encode_options(&c),
                _ => unreachable!(),
            }
        };
        let default = Some(ibp_codec::options::DEFAULT_FEWER_RUNS_WITHIN);
        assert_eq!(options(&[]).fewer_runs_within, default);
        assert_eq!(options(&["--gpu"]).fewer_runs_within, default);
        assert_eq!(options(&["--fewer-runs-within", "off"]).fewer_runs_within, None);
        assert_eq!(options(&["--fewer-runs-within", "0.25"]).fewer_runs_within, Some(0.25));
        assert_eq!(
            options(&["--gpu", "--fewer-runs-within", "0"]).fewer_runs_within,
            Some(0.0)
        );
        for bad in ["-0.1", "1.5", "nan", "none"] {
            assert!(parse_runs_within(bad).is_err(), "{bad:?} accepted");
        }
    }
}
