//! Copying without ever hanging the UI. The system clipboard (arboard) is used from its own
//! thread, which keeps the clipboard object alive (X11 serves the contents from it); the UI waits
//! for its answer for at most [`TIMEOUT_MS`]. Without `DISPLAY`/`WAYLAND_DISPLAY`, when arboard
//! fails, or when it does not answer in time, the text goes to the terminal as OSC 52 (which
//! works over SSH and in most terminals and tmux). Whatever happens is a status message.

use std::io::Write;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// How long the UI waits for the system clipboard.
pub const TIMEOUT_MS: u64 = 700;

type Reply = Result<(), String>;

/// A copy waiting for the clipboard thread.
struct Pending {
    reply: Receiver<Reply>,
    deadline: Instant,
    text: String,
    what: String,
}

pub struct Clipboard {
    /// The clipboard thread; `None` when there is no display or it stopped answering.
    tx: Option<Sender<(String, Sender<Reply>)>>,
    pending: Option<Pending>,
}

fn has_display() -> bool {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    set("DISPLAY") || set("WAYLAND_DISPLAY") || cfg!(any(target_os = "macos", windows))
}

impl Clipboard {
    pub fn new() -> Self {
        let tx = has_display().then(spawn_thread).flatten();
        Clipboard { tx, pending: None }
    }

    /// Start copying; `Some(message)` when it finished at once (OSC 52), else poll.
    pub fn copy(&mut self, text: String, what: String) -> Option<Result<String, String>> {
        if self.pending.is_some() {
            // One at a time: the older copy falls back to OSC 52 right away.
            if let Some(p) = self.pending.take() {
                let _ = osc52(&p.text);
            }
        }
        if let Some(tx) = &self.tx {
            let (rtx, rrx) = mpsc::channel();
            if tx.send((text.clone(), rtx)).is_ok() {
                self.pending = Some(Pending {
                    reply: rrx,
                    deadline: Instant::now() + Duration::from_millis(TIMEOUT_MS),
                    text,
                    what,
                });
                return None;
            }
            self.tx = None;
        }
        Some(osc52(&text).map(|_| format!("copied {what} (OSC 52)")))
    }

    /// Whether a copy is waiting for the clipboard thread.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Check on a pending copy: its outcome once known.
    pub fn poll(&mut self) -> Option<Result<String, String>> {
        let p = self.pending.as_ref()?;
        let outcome = match p.reply.try_recv() {
            Ok(Ok(())) => Ok(format!("copied {}", p.what)),
            Ok(Err(e)) => {
                osc52(&p.text).map(|_| format!("copied {} via OSC 52 (clipboard: {e})", p.what))
            }
            Err(TryRecvError::Empty) if Instant::now() < p.deadline => return None,
            Err(_) => {
                // No answer in time: never wait on this clipboard again.
                self.tx = None;
                osc52(&p.text).map(|_| {
                    format!(
                        "copied {} via OSC 52 (the clipboard did not answer)",
                        p.what
                    )
                })
            }
        };
        self.pending = None;
        Some(outcome)
    }
}

fn spawn_thread() -> Option<Sender<(String, Sender<Reply>)>> {
    let (tx, rx) = mpsc::channel::<(String, Sender<Reply>)>();
    std::thread::Builder::new()
        .name("knowledge-tui-clipboard".into())
        .spawn(move || {
            let mut cb: Option<arboard::Clipboard> = None;
            while let Ok((text, reply)) = rx.recv() {
                if cb.is_none() {
                    match arboard::Clipboard::new() {
                        Ok(c) => cb = Some(c),
                        Err(e) => {
                            let _ = reply.send(Err(e.to_string()));
                            continue;
                        }
                    }
                }
                let res = match cb.as_mut() {
                    Some(c) => c.set_text(text).map_err(|e| e.to_string()),
                    None => Err("no clipboard".to_string()),
                };
                let _ = reply.send(res);
            }
        })
        .ok()?;
    Some(tx)
}

/// The OSC 52 sequence that puts `text` on the terminal's clipboard.
pub fn osc52_sequence(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

fn osc52(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout();
    out.write_all(osc52_sequence(text).as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| format!("cannot write to the terminal: {e}"))
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
        assert_eq!(osc52_sequence("hi"), "\x1b]52;c;aGk=\x07");
    }
}
