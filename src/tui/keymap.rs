//! Keys are data: a table of (context, action, keys) that the runtime looks keys up in, that the
//! config file can override (`[keys]` in `<data_dir>/config.toml`), and that the help overlay and
//! the status-line hints are generated from. Nothing else in the explorer knows a key.
//!
//! Lookup walks the contexts of the current screen from the innermost (a popup, a view) out to
//! `global`; a key that no context binds goes to the focused text field, if there is one.
//! Config entries are `action = ["key", …]` (replaces that action's keys in every context that
//! binds it) or `context.action = [...]` (one context only).

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Query,
    Results,
    View,
    DispatchEdit,
    DispatchPreview,
    Outbox,
    Activity,
    Filters,
    FiltersText,
    FiltersChoice,
    Confirm,
    Copy,
    Help,
    Prompt,
}

impl Context {
    pub const ALL: [Context; 15] = [
        Context::Global,
        Context::Query,
        Context::Results,
        Context::View,
        Context::DispatchEdit,
        Context::DispatchPreview,
        Context::Outbox,
        Context::Activity,
        Context::Filters,
        Context::FiltersText,
        Context::FiltersChoice,
        Context::Confirm,
        Context::Copy,
        Context::Help,
        Context::Prompt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Query => "query",
            Context::Results => "results",
            Context::View => "view",
            Context::DispatchEdit => "dispatch_edit",
            Context::DispatchPreview => "dispatch_preview",
            Context::Outbox => "outbox",
            Context::Activity => "activity",
            Context::Filters => "filters",
            Context::FiltersText => "filters_text",
            Context::FiltersChoice => "filters_choice",
            Context::Confirm => "confirm",
            Context::Copy => "copy",
            Context::Help => "help",
            Context::Prompt => "prompt",
        }
    }

    /// The heading of the context in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Query => "Query box",
            Context::Results => "Lanes and actors",
            Context::View => "Episode and code views",
            Context::DispatchEdit => "Dispatch: editing the task",
            Context::DispatchPreview => "Dispatch: preview",
            Context::Outbox => "Outbox",
            Context::Activity => "Activity view",
            Context::Filters => "Filter popup",
            Context::FiltersText => "Filter popup: text fields",
            Context::FiltersChoice => "Filter popup: choices",
            Context::Confirm => "Confirmation dialog",
            Context::Copy => "Copy menu",
            Context::Help => "Help",
            Context::Prompt => "Text prompt",
        }
    }

    fn parse(s: &str) -> Option<Context> {
        Context::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// One key with its modifiers, normalised (a `Char` carries its own case, so no SHIFT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyChord {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeyChord {
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        let mut mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Char(c) => {
                mods.remove(KeyModifiers::SHIFT);
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            other => other,
        };
        KeyChord { code, mods }
    }

    pub fn from_event(e: &KeyEvent) -> Self {
        KeyChord::new(e.code, e.modifiers)
    }

    /// Parse `ctrl-s`, `shift-tab`, `G`, `?`, `enter`, `pgdn`, `f1`, `space`, …
    pub fn parse(s: &str) -> Option<KeyChord> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s.trim();
        if rest.is_empty() {
            return None;
        }
        loop {
            let lower = rest.to_ascii_lowercase();
            let (m, n) = if lower.starts_with("ctrl-") || lower.starts_with("ctrl+") {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt-") || lower.starts_with("alt+") {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift-") || lower.starts_with("shift+") {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            if rest.len() == n {
                break;
            }
            mods |= m;
            rest = &rest[n..];
        }
        let lower = rest.to_ascii_lowercase();
        let code = match lower.as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "insert" | "ins" => KeyCode::Insert,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                let n: u8 = f[1..].parse().ok()?;
                if !(1..=24).contains(&n) {
                    return None;
                }
                KeyCode::F(n)
            }
            _ => {
                let mut chars = rest.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                let c = if mods.contains(KeyModifiers::SHIFT) {
                    c.to_uppercase().next().unwrap_or(c)
                } else {
                    c
                };
                KeyCode::Char(c)
            }
        };
        Some(KeyChord::new(code, mods))
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::Insert => f.write_str("insert"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::F(n) => write!(f, "f{n}"),
            _ => f.write_str("?"),
        }
    }
}

mod defaults;
pub use defaults::DEFAULTS;

/// The keymap in use: the defaults with the config's overrides applied.
#[derive(Debug, Clone)]
pub struct Keymap {
    /// (context, action name) → keys, in table order.
    bindings: Vec<(Context, &'static str, Vec<KeyChord>)>,
    /// Problems found in the config's `[keys]` (shown in the status line at start).
    pub warnings: Vec<String>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::new(&BTreeMap::new())
    }
}

impl Keymap {
    /// The defaults, with `overrides` (action or `context.action` → keys) applied.
    pub fn new(overrides: &BTreeMap<String, Vec<String>>) -> Self {
        let mut bindings: Vec<(Context, &'static str, Vec<KeyChord>)> = DEFAULTS
            .iter()
            .map(|(c, a, keys)| {
                (
                    *c,
                    *a,
                    keys.iter().filter_map(|k| KeyChord::parse(k)).collect(),
                )
            })
            .collect();
        let mut warnings = Vec::new();
        for (name, keys) in overrides {
            let (ctx, action) = match name.split_once('.') {
                Some((c, a)) => match Context::parse(c) {
                    Some(c) => (Some(c), a),
                    None => {
                        warnings.push(format!("keys: unknown context \"{c}\" in \"{name}\""));
                        continue;
                    }
                },
                None => (None, name.as_str()),
            };
            let Some(static_name) = Action::BINDABLE
                .iter()
                .map(|(n, _)| *n)
                .find(|n| *n == action)
            else {
                warnings.push(format!("keys: unknown action \"{action}\""));
                continue;
            };
            let mut chords = Vec::new();
            for k in keys {
                match KeyChord::parse(k) {
                    Some(c) => chords.push(c),
                    None => warnings.push(format!("keys: cannot read the key \"{k}\" of {name}")),
                }
            }
            let mut applied = false;
            for b in bindings.iter_mut() {
                if b.1 == static_name && ctx.is_none_or(|c| c == b.0) {
                    b.2 = chords.clone();
                    applied = true;
                }
            }
            if !applied {
                bindings.push((ctx.unwrap_or(Context::Results), static_name, chords));
            }
        }
        Keymap { bindings, warnings }
    }

    /// The action bound to `key` in the first of `contexts` that binds it.
    pub fn lookup(&self, contexts: &[Context], key: KeyChord) -> Option<Action> {
        contexts.iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|(c, _, keys)| c == ctx && keys.contains(&key))
                .and_then(|(_, name, _)| Action::from_name(name))
        })
    }

    /// The keys of an action in a context, e.g. `["y"]`.
    pub fn keys(&self, ctx: Context, action: &str) -> Vec<KeyChord> {
        self.bindings
            .iter()
            .filter(|(c, a, _)| *c == ctx && *a == action)
            .flat_map(|(_, _, k)| k.iter().copied())
            .collect()
    }

    /// The first key of an action in the first of `contexts` that binds it, as text.
    pub fn key_label(&self, contexts: &[Context], action: &str) -> Option<String> {
        contexts
            .iter()
            .find_map(|c| self.keys(*c, action).first().map(|k| k.to_string()))
    }

    /// Every context with its bound actions (for the help overlay and docs/TUI.md).
    pub fn sections(&self) -> Vec<(Context, Vec<(String, &'static str)>)> {
        Context::ALL
            .into_iter()
            .filter_map(|ctx| {
                let rows: Vec<(String, &'static str)> = self
                    .bindings
                    .iter()
                    .filter(|(c, _, keys)| *c == ctx && !keys.is_empty())
                    .map(|(_, name, keys)| {
                        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                        (keys.join(" "), Action::describe(name))
                    })
                    .collect();
                (!rows.is_empty()).then_some((ctx, rows))
            })
            .collect()
    }

    /// `key action` hints for the status line, for the actions named, as bound in `contexts`.
    pub fn hints(&self, contexts: &[Context], actions: &[(&str, &str)]) -> Vec<(String, String)> {
        actions
            .iter()
            .filter_map(|(a, label)| self.key_label(contexts, a).map(|k| (k, label.to_string())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print() {
        for (text, shown) in [
            ("ctrl-s", "ctrl-s"),
            ("Ctrl+S", "ctrl-s"),
            ("G", "G"),
            ("shift-g", "G"),
            ("?", "?"),
            ("enter", "enter"),
            ("shift-tab", "shift-tab"),
            ("pgdn", "pgdn"),
            ("f1", "f1"),
            ("space", "space"),
            ("alt-x", "alt-x"),
            ("-", "-"),
            ("+", "+"),
        ] {
            let k = KeyChord::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(k.to_string(), shown, "{text}");
        }
        assert!(KeyChord::parse("").is_none());
        assert!(KeyChord::parse("ctrl-").is_none());
        assert_eq!(
            KeyChord::parse("ctrl--").map(|k| k.to_string()),
            Some("ctrl--".into())
        );
        assert!(KeyChord::parse("nope").is_none());
        assert!(KeyChord::parse("f99").is_none());
    }

    #[test]
    fn shifted_chars_match_their_event() {
        let ev = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(KeyChord::from_event(&ev), KeyChord::parse("G").unwrap());
        let ev = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(
            KeyChord::from_event(&ev),
            KeyChord::parse("shift-tab").unwrap()
        );
    }

    #[test]
    fn lookup_walks_contexts_innermost_first() {
        let km = Keymap::default();
        let q = KeyChord::parse("q").unwrap();
        assert!(matches!(
            km.lookup(&[Context::View, Context::Results], q),
            Some(Action::Back)
        ));
        assert!(matches!(
            km.lookup(&[Context::Results, Context::Global], q),
            Some(Action::Quit)
        ));
        // In the query box `q` is text.
        assert!(km.lookup(&[Context::Query, Context::Global], q).is_none());
        let c = KeyChord::parse("ctrl-c").unwrap();
        assert!(matches!(
            km.lookup(&[Context::Query, Context::Global], c),
            Some(Action::Quit)
        ));
    }

    #[test]
    fn overrides_replace_keys_and_report_mistakes() {
        let mut o = BTreeMap::new();
        o.insert("quit".to_string(), vec!["ctrl-q".to_string()]);
        o.insert("view.next_match".to_string(), vec!["ctrl-n".to_string()]);
        o.insert("frobnicate".to_string(), vec!["x".to_string()]);
        o.insert("help".to_string(), vec!["nope-key".to_string()]);
        let km = Keymap::new(&o);
        let ctx = [Context::Results, Context::Global];
        assert!(km.lookup(&ctx, KeyChord::parse("q").unwrap()).is_none());
        assert!(matches!(
            km.lookup(&ctx, KeyChord::parse("ctrl-q").unwrap()),
            Some(Action::Quit)
        ));
        assert!(matches!(
            km.lookup(&[Context::View], KeyChord::parse("ctrl-n").unwrap()),
            Some(Action::NextMatch)
        ));
        assert_eq!(km.warnings.len(), 2, "{:?}", km.warnings);
    }

    #[test]
    fn every_default_binding_names_a_real_action_and_key() {
        for (ctx, name, keys) in DEFAULTS {
            assert!(Action::from_name(name).is_some(), "{name}");
            for k in *keys {
                assert!(KeyChord::parse(k).is_some(), "{} {name} {k}", ctx.name());
            }
        }
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    #[test]
    fn docs_tui_md_names_every_action_and_context() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/TUI.md");
        let doc = std::fs::read_to_string(path).expect("docs/TUI.md");
        for (name, _) in Action::BINDABLE {
            assert!(
                doc.contains(name),
                "docs/TUI.md does not name the action {name}"
            );
        }
        for ctx in Context::ALL {
            assert!(
                doc.contains(ctx.name()),
                "docs/TUI.md does not name {}",
                ctx.name()
            );
        }
    }
}
