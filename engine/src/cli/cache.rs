//! The disk cache on the command line: `--cache DIR`, `--no-cache`, `--cache-limit`,
//! `--cache-all` on `build` and `run-task`, and `orogen cache stats|trim|clear`.

use orogen::eval::disk::{human, Store, DEFAULT_LIMIT_BYTES};
use orogen::eval::DiskCache;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// How a command uses the disk cache.
#[derive(clap::Args, Clone, Debug, Default)]
pub(super) struct CacheArgs {
    /// The cache folder (default: $OROGEN_CACHE, else ~/.cache/orogen). Node results are
    /// stored under keys that hash everything they depend on, so a later build after an edit
    /// recomputes only what the edit changed; outputs are the same bytes with or without it.
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub(super) cache: Option<PathBuf>,
    /// Neither read nor write the cache (also: OROGEN_CACHE=off).
    #[arg(long)]
    pub(super) no_cache: bool,
    /// Size limit of the cache folder in GiB: after a build that stored results, the least
    /// recently used entries are removed until it fits (default 10, or $OROGEN_CACHE_LIMIT_GIB).
    #[arg(long, value_name = "GIB")]
    pub(super) cache_limit: Option<f64>,
    /// Store every node's result, not only those slower to compute than to read back.
    #[arg(long)]
    pub(super) cache_all: bool,
}

impl CacheArgs {
    fn dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache.clone().or_else(DiskCache::default_dir)
    }

    fn limit_bytes(&self) -> Result<u64, String> {
        let gib = match self.cache_limit {
            Some(g) => g,
            None => match std::env::var("OROGEN_CACHE_LIMIT_GIB") {
                Ok(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| format!("OROGEN_CACHE_LIMIT_GIB={v}: expected a number of GiB"))?,
                Err(_) => return Ok(DEFAULT_LIMIT_BYTES),
            },
        };
        if !(gib.is_finite() && gib >= 0.0) {
            return Err(format!("cache limit {gib} GiB: expected a number ≥ 0"));
        }
        Ok((gib * (1u64 << 30) as f64) as u64)
    }

    /// The cache to use, or `None` (off, or the folder cannot be made: said once on stderr,
    /// and the build goes on without it).
    pub(super) fn open(&self) -> Result<Option<Arc<DiskCache>>, ExitCode> {
        let limit = self.limit_bytes().map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(super::EXIT_INVALID)
        })?;
        let Some(dir) = self.dir() else {
            return Ok(None);
        };
        match DiskCache::open(&dir, limit) {
            Ok(mut c) => {
                c.store = if self.cache_all {
                    Store::All
                } else {
                    Store::Costly
                };
                Ok(Some(Arc::new(c)))
            }
            Err(e) => {
                eprintln!(
                    "warning: cache folder {}: {e}; building without the cache",
                    orogen::io::owned::escape_path(&dir)
                );
                Ok(None)
            }
        }
    }
}

/// After a run: a refused write said once, and the folder trimmed to its limit if this run
/// stored anything.
pub(super) fn finish(cache: Option<&Arc<DiskCache>>) {
    let Some(c) = cache else { return };
    if let Some(why) = c.take_refusal() {
        eprintln!("warning: results not cached: {why}");
    }
    if c.counters.stored.load(std::sync::atomic::Ordering::Relaxed) > 0 {
        c.trim(c.limit_bytes);
    }
}

/// `orogen cache` subcommands.
#[derive(clap::Subcommand)]
pub(super) enum CacheCommand {
    /// The cache folder, its entries and their size.
    Stats {
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Remove the least recently used entries until the folder is within its limit, and
    /// entries of older format versions.
    Trim {
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Remove every entry.
    Clear {
        #[command(flatten)]
        cache: CacheArgs,
    },
}

pub(super) fn run_cache(command: &CacheCommand) -> ExitCode {
    let (CacheCommand::Stats { cache: args }
    | CacheCommand::Trim { cache: args }
    | CacheCommand::Clear { cache: args }) = command;
    let cache = match args.open() {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("error: no cache folder (--no-cache, OROGEN_CACHE=off, or no home folder): give one with --cache DIR");
            return ExitCode::from(super::EXIT_INVALID);
        }
        Err(code) => return code,
    };
    match command {
        CacheCommand::Stats { .. } => {
            let u = cache.usage();
            println!("{}", orogen::io::owned::escape_path(cache.dir()));
            println!(
                "{} entries, {} of a {} limit{}",
                u.entries,
                human(u.bytes),
                human(cache.limit_bytes),
                if u.stale > 0 {
                    format!("; {} stale files (orogen cache trim removes them)", u.stale)
                } else {
                    String::new()
                }
            );
        }
        CacheCommand::Trim { .. } => {
            let (n, bytes) = cache.trim(cache.limit_bytes);
            println!("removed {n} files, {}", human(bytes));
        }
        CacheCommand::Clear { .. } => {
            let (n, bytes) = cache.clear();
            println!("removed {n} files, {}", human(bytes));
        }
    }
    ExitCode::SUCCESS
}
