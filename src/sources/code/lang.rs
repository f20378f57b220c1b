//! What kind of file a path is, decided from its name alone (plus a shebang for scripts without
//! an extension): which grammar chunks it, whether it is a Markdown document or a config file,
//! and whether it is generated or vendored output that is not worth indexing.

/// A language with a tree-sitter grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Php,
    Java,
    C,
    Cpp,
    Bash,
}

/// Config formats chunked by top-level key or section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    Yaml,
    Toml,
    Json,
    /// `[section]` headers: `.ini`, `.cfg`, `.conf`.
    Ini,
    /// One `KEY=value` per line: `.env`, `.properties`.
    KeyValue,
}

/// How a file is chunked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Code(Lang),
    Markdown,
    Config(ConfigFormat),
    Text,
}

/// Directory names never descended into: dependencies, build output, caches.
pub const VENDORED_DIRS: &[&str] = &[
    "node_modules",
    "vendor",
    "target",
    "dist",
    "build",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".next",
    ".nuxt",
    ".gradle",
    "bower_components",
    ".terraform",
];

/// Version-control metadata: skipped silently (it is not part of the tree).
pub const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// Lock files and other machine-written files that only add noise.
const GENERATED_NAMES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "pipfile.lock",
    "uv.lock",
    "gemfile.lock",
    "composer.lock",
    "go.sum",
    "flake.lock",
    "packages.lock.json",
];

/// Extensions of files that are binary (skipped without reading).
const BINARY_EXTS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "pdf", "zip", "gz", "tgz", "bz2",
    "xz", "zst", "7z", "rar", "jar", "war", "class", "o", "a", "so", "dylib", "dll", "exe", "bin",
    "wasm", "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4", "mov", "avi", "webm", "ogg", "wav",
    "flac", "sqlite", "db", "pyc", "pyo", "lockb", "rlib", "rmeta", "pdb", "dat",
];

fn lower_ext(name: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None; // `.bashrc`: a dotfile, not an extension
    }
    Some(ext.to_ascii_lowercase())
}

/// True for lock files, minified bundles and source maps.
pub fn is_generated(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    GENERATED_NAMES.contains(&lower.as_str())
        || lower.ends_with(".min.js")
        || lower.ends_with(".min.css")
        || lower.ends_with(".min.mjs")
        || lower.ends_with(".js.map")
        || lower.ends_with(".css.map")
        || lower.ends_with(".lock")
}

/// True when the extension alone says the file is binary.
pub fn is_binary_name(name: &str) -> bool {
    lower_ext(name).is_some_and(|e| BINARY_EXTS.contains(&e.as_str()))
}

/// Classify a file by its name; `head` (the first bytes) is used for shebangs.
pub fn file_kind(name: &str, head: &str) -> FileKind {
    let lower = name.to_ascii_lowercase();
    if lower == ".env" || lower.starts_with(".env.") || lower.ends_with(".env") {
        return FileKind::Config(ConfigFormat::KeyValue);
    }
    let Some(ext) = lower_ext(&lower) else {
        return shebang_kind(head).unwrap_or(FileKind::Text);
    };
    match ext.as_str() {
        "rs" => FileKind::Code(Lang::Rust),
        "py" | "pyi" | "pyw" => FileKind::Code(Lang::Python),
        "js" | "mjs" | "cjs" | "jsx" => FileKind::Code(Lang::JavaScript),
        "ts" | "mts" | "cts" => FileKind::Code(Lang::TypeScript),
        "tsx" => FileKind::Code(Lang::Tsx),
        "go" => FileKind::Code(Lang::Go),
        "php" | "phtml" => FileKind::Code(Lang::Php),
        "java" => FileKind::Code(Lang::Java),
        "c" | "h" => FileKind::Code(Lang::C),
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" => {
            FileKind::Code(Lang::Cpp)
        }
        "sh" | "bash" => FileKind::Code(Lang::Bash),
        "md" | "markdown" | "mdx" => FileKind::Markdown,
        "yaml" | "yml" => FileKind::Config(ConfigFormat::Yaml),
        "toml" => FileKind::Config(ConfigFormat::Toml),
        "json" | "jsonc" | "json5" => FileKind::Config(ConfigFormat::Json),
        "ini" | "cfg" | "conf" | "cnf" => FileKind::Config(ConfigFormat::Ini),
        "properties" | "env" => FileKind::Config(ConfigFormat::KeyValue),
        _ => FileKind::Text,
    }
}

fn shebang_kind(head: &str) -> Option<FileKind> {
    let first = head.lines().next()?;
    let rest = first.strip_prefix("#!")?;
    if rest.contains("python") {
        Some(FileKind::Code(Lang::Python))
    } else if rest.contains("bash") || rest.trim_end().ends_with("/sh") || rest.contains(" sh") {
        Some(FileKind::Code(Lang::Bash))
    } else if rest.contains("node") {
        Some(FileKind::Code(Lang::JavaScript))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        assert_eq!(file_kind("main.rs", ""), FileKind::Code(Lang::Rust));
        assert_eq!(file_kind("App.TSX", ""), FileKind::Code(Lang::Tsx));
        assert_eq!(
            file_kind(".env.local", ""),
            FileKind::Config(ConfigFormat::KeyValue)
        );
        assert_eq!(file_kind("README.md", ""), FileKind::Markdown);
        assert_eq!(file_kind(".bashrc", ""), FileKind::Text);
        assert_eq!(
            file_kind("deploy", "#!/usr/bin/env bash\necho"),
            FileKind::Code(Lang::Bash)
        );
        assert!(is_generated("Cargo.lock"));
        assert!(is_generated("app.min.js"));
        assert!(!is_generated("app.js"));
        assert!(is_binary_name("logo.PNG"));
        assert!(!is_binary_name(".png"));
    }
}
