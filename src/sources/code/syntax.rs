//! Symbol spans from tree-sitter grammars (Rust, Python, JavaScript, TypeScript/TSX, Go, PHP,
//! Java, C, C++, shell).
//!
//! One small walker serves every language: each node kind is classified as a definition (a
//! function, struct…), a container whose members are qualified with its name (class, impl, trait,
//! interface), a transparent wrapper to look through (namespaces, `export`, decorators, templates,
//! header guards) or nothing. Function bodies are never descended into. A container's own lines
//! that no member covers (its header, fields) become chunks named after the container. Parsing
//! has a time budget; a failed or cancelled parse returns `None` and the caller falls back to
//! windows. The walk is wrapped in `catch_unwind`, so no input can panic the indexer.

use std::time::{Duration, Instant};

use tree_sitter::{Language, Node, ParseOptions, ParseState, Parser};

use super::chunk::{meaningful, trim_range, Span};
use super::lang::Lang;

/// A parse taking longer than this is cancelled (the file is chunked by window).
const PARSE_BUDGET: Duration = Duration::from_secs(3);
/// Containers nested deeper than this are not descended into.
const MAX_DEPTH: usize = 48;
/// Longest symbol name kept, in chars.
const MAX_NAME_CHARS: usize = 200;

fn language(lang: Lang) -> Language {
    match lang {
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
    }
}

/// Separator between a container and a member name.
fn separator(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust | Lang::Php | Lang::C | Lang::Cpp => "::",
        _ => ".",
    }
}

/// Symbol spans of a source file, or `None` when the grammar could not parse it.
pub fn symbol_spans(lang: Lang, src: &str, lines: &[&str]) -> Option<Vec<Span>> {
    let run = std::panic::AssertUnwindSafe(|| parse_spans(lang, src, lines));
    std::panic::catch_unwind(run).ok().flatten()
}

fn parse_spans(lang: Lang, src: &str, lines: &[&str]) -> Option<Vec<Span>> {
    let mut parser = Parser::new();
    parser.set_language(&language(lang)).ok()?;
    let bytes = src.as_bytes();
    let deadline = Instant::now() + PARSE_BUDGET;
    let mut cancel = |_: &ParseState| Instant::now() > deadline;
    let options = ParseOptions::new().progress_callback(&mut cancel);
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(options),
    )?;
    let mut walker = Walker {
        lang,
        src: bytes,
        lines,
        sep: separator(lang),
        spans: Vec::new(),
    };
    walker.items(tree.root_node(), None, 0);
    Some(walker.spans)
}

/// What a node is to the walker.
enum Role<'t> {
    /// A definition; `body` is set for containers whose members are walked.
    Def {
        kind: &'static str,
        body: Option<Node<'t>>,
    },
    /// Look inside this node (its children are items).
    Transparent(Node<'t>),
    /// The definition inside this node is the item; its span starts where this node starts.
    Wrapper(Node<'t>),
    None,
}

struct Walker<'a> {
    lang: Lang,
    src: &'a [u8],
    lines: &'a [&'a str],
    sep: &'static str,
    spans: Vec<Span>,
}

fn def<'t>(kind: &'static str) -> Role<'t> {
    Role::Def { kind, body: None }
}

fn container<'t>(kind: &'static str, node: Node<'t>) -> Role<'t> {
    match node.child_by_field_name("body") {
        Some(body) => Role::Def {
            kind,
            body: Some(body),
        },
        None => def(kind),
    }
}

fn is_comment(kind: &str) -> bool {
    kind.contains("comment")
}

fn end_line(n: Node<'_>) -> usize {
    let (s, e) = (n.start_position(), n.end_position());
    if e.column == 0 && e.row > s.row {
        e.row - 1
    } else {
        e.row
    }
}

impl<'a> Walker<'a> {
    fn text(&self, n: Node<'_>) -> Option<String> {
        let raw = n.utf8_text(self.src).ok()?;
        let squeezed: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        let name: String = squeezed.chars().take(MAX_NAME_CHARS).collect();
        (!name.is_empty()).then_some(name)
    }

    fn field_text(&self, n: Node<'_>, field: &str) -> Option<String> {
        self.text(n.child_by_field_name(field)?)
    }

    /// Walk the named children of `parent` as items.
    fn items(&mut self, parent: Node<'_>, prefix: Option<&str>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut cursor = parent.walk();
        let children: Vec<Node<'_>> = parent.named_children(&mut cursor).collect();
        for child in children {
            self.item(child, None, prefix, depth);
        }
    }

    fn item(&mut self, node: Node<'_>, start: Option<usize>, prefix: Option<&str>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match self.role(node) {
            Role::None => {}
            Role::Transparent(inner) => self.items(inner, prefix, depth + 1),
            Role::Wrapper(inner) => {
                let from = start.unwrap_or_else(|| self.leading_start(node));
                self.item(inner, Some(from), prefix, depth + 1);
            }
            Role::Def { kind, body } => {
                let Some(name) = self.name(node) else {
                    if let Some(body) = body {
                        self.items(body, prefix, depth + 1);
                    }
                    return;
                };
                let qualified = match prefix {
                    Some(p) if !name.contains(self.sep) => format!("{p}{}{name}", self.sep),
                    _ => name,
                };
                let kind = match (kind, prefix.is_some()) {
                    ("function", true) => "method",
                    _ => kind,
                };
                let from = start.unwrap_or_else(|| self.leading_start(node));
                let to = end_line(node);
                match body {
                    None => self.push(from, to, &qualified, kind),
                    Some(body) => {
                        let before = self.spans.len();
                        self.items(body, Some(&qualified), depth + 1);
                        let mut members: Vec<(usize, usize)> = self.spans[before..]
                            .iter()
                            .map(|s| (s.start, s.end))
                            .collect();
                        members.sort_unstable();
                        let mut cur = from;
                        for (ms, me) in members.into_iter().chain([(to + 1, to + 1)]) {
                            if ms > cur {
                                if let Some((s, e)) = trim_range(self.lines, cur, ms - 1) {
                                    self.push(s, e, &qualified, kind);
                                }
                            }
                            cur = cur.max(me + 1);
                        }
                    }
                }
            }
        }
    }

    fn push(&mut self, start: usize, end: usize, symbol: &str, kind: &str) {
        let has_text = (start..=end.min(self.lines.len().saturating_sub(1)))
            .any(|i| self.lines.get(i).is_some_and(|l| meaningful(l)));
        if has_text {
            self.spans.push(Span::new(
                start,
                end,
                "symbol",
                Some(symbol.to_string()),
                Some(kind),
            ));
        }
    }

    /// The first line of `node` extended over the comments and attributes right above it.
    fn leading_start(&self, node: Node<'_>) -> usize {
        let mut start = node.start_position().row;
        let mut cur = node;
        while let Some(prev) = cur.prev_named_sibling() {
            let k = prev.kind();
            let attached = is_comment(k) || k == "attribute_item" || k == "decorator";
            if !attached || end_line(prev) + 1 < start {
                break;
            }
            // A trailing comment on the line of the previous item belongs to that item.
            if prev
                .prev_named_sibling()
                .is_some_and(|pp| end_line(pp) == prev.start_position().row)
            {
                break;
            }
            start = prev.start_position().row;
            cur = prev;
        }
        start
    }

    fn role<'t>(&self, n: Node<'t>) -> Role<'t> {
        let k = n.kind();
        match self.lang {
            Lang::Rust => match k {
                "function_item" | "function_signature_item" => def("function"),
                "impl_item" => container("impl", n),
                "trait_item" => container("trait", n),
                "struct_item" => def("struct"),
                "enum_item" => def("enum"),
                "union_item" => def("union"),
                "macro_definition" => def("macro"),
                "mod_item" => n
                    .child_by_field_name("body")
                    .map_or(Role::None, Role::Transparent),
                _ => Role::None,
            },
            Lang::Python => match k {
                "function_definition" => def("function"),
                "class_definition" => container("class", n),
                "decorated_definition" => n
                    .child_by_field_name("definition")
                    .map_or(Role::None, Role::Wrapper),
                _ => Role::None,
            },
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => self.js_role(n),
            Lang::Go => match k {
                "function_declaration" => def("function"),
                "method_declaration" => def("method"),
                "type_declaration" => {
                    let mut c = n.walk();
                    let spec = n.named_children(&mut c).find(|x| x.kind() == "type_spec");
                    match spec
                        .and_then(|s| s.child_by_field_name("type"))
                        .map(|t| t.kind())
                    {
                        Some("struct_type") => def("struct"),
                        Some("interface_type") => def("interface"),
                        Some(_) => def("type"),
                        None => Role::None,
                    }
                }
                _ => Role::None,
            },
            Lang::Php => match k {
                "function_definition" | "method_declaration" => def("function"),
                "class_declaration" => container("class", n),
                "interface_declaration" => container("interface", n),
                "trait_declaration" => container("trait", n),
                "enum_declaration" => container("enum", n),
                "namespace_definition" => n
                    .child_by_field_name("body")
                    .map_or(Role::None, Role::Transparent),
                _ => Role::None,
            },
            Lang::Java => match k {
                "class_declaration" => container("class", n),
                "record_declaration" => container("record", n),
                "interface_declaration" => container("interface", n),
                "enum_declaration" => container("enum", n),
                "annotation_type_declaration" => def("interface"),
                "method_declaration" | "constructor_declaration" => def("function"),
                "enum_body_declarations" => Role::Transparent(n),
                _ => Role::None,
            },
            Lang::C | Lang::Cpp => self.c_role(n),
            Lang::Bash => match k {
                "function_definition" => def("function"),
                _ => Role::None,
            },
        }
    }

    fn js_role<'t>(&self, n: Node<'t>) -> Role<'t> {
        match n.kind() {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                def("function")
            }
            "method_definition" | "abstract_method_signature" => def("function"),
            "class_declaration" | "abstract_class_declaration" => container("class", n),
            "interface_declaration" => def("interface"),
            "type_alias_declaration" => def("type"),
            "enum_declaration" => def("enum"),
            "export_statement" => n
                .child_by_field_name("declaration")
                .map_or(Role::None, Role::Wrapper),
            "lexical_declaration" | "variable_declaration" => {
                if self.fn_declarator(n).is_some() {
                    def("function")
                } else {
                    Role::None
                }
            }
            "field_definition" | "public_field_definition" => {
                let value = n.child_by_field_name("value").map(|v| v.kind());
                if matches!(value, Some("arrow_function" | "function_expression")) {
                    def("function")
                } else {
                    Role::None
                }
            }
            "internal_module" => n
                .child_by_field_name("body")
                .map_or(Role::None, Role::Transparent),
            "expression_statement" => {
                let inner = n.named_child(0).filter(|c| c.kind() == "internal_module");
                inner
                    .and_then(|m| m.child_by_field_name("body"))
                    .map_or(Role::None, Role::Transparent)
            }
            _ => Role::None,
        }
    }

    fn c_role<'t>(&self, n: Node<'t>) -> Role<'t> {
        let cpp = self.lang == Lang::Cpp;
        match n.kind() {
            "function_definition" => def("function"),
            "class_specifier" if cpp => container("class", n),
            "struct_specifier" if cpp => container("struct", n),
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                if n.child_by_field_name("body").is_some() {
                    def(if n.kind() == "enum_specifier" {
                        "enum"
                    } else {
                        "struct"
                    })
                } else {
                    Role::None
                }
            }
            "declaration" | "type_definition" => match n.child_by_field_name("type") {
                Some(t)
                    if t.child_by_field_name("body").is_some()
                        && matches!(
                            t.kind(),
                            "struct_specifier"
                                | "union_specifier"
                                | "enum_specifier"
                                | "class_specifier"
                        ) =>
                {
                    if cpp && t.kind() == "class_specifier" {
                        container("class", t)
                    } else if cpp && t.kind() == "struct_specifier" {
                        container("struct", t)
                    } else {
                        def("struct")
                    }
                }
                _ => Role::None,
            },
            "namespace_definition" | "linkage_specification" => n
                .child_by_field_name("body")
                .map_or(Role::None, Role::Transparent),
            "template_declaration" => {
                let mut c = n.walk();
                let inner = n.named_children(&mut c).find(|x| {
                    matches!(
                        x.kind(),
                        "function_definition"
                            | "class_specifier"
                            | "struct_specifier"
                            | "declaration"
                    )
                });
                inner.map_or(Role::None, Role::Wrapper)
            }
            "preproc_ifdef" | "preproc_if" | "preproc_else" | "preproc_elif"
            | "preproc_elifdef" => Role::Transparent(n),
            _ => Role::None,
        }
    }

    /// The declarator of a `const f = () => …` style declaration.
    fn fn_declarator<'t>(&self, n: Node<'t>) -> Option<Node<'t>> {
        let mut c = n.walk();
        let mut children = n.named_children(&mut c);
        children.find(|d| {
            d.kind() == "variable_declarator"
                && d.child_by_field_name("value").is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function"
                    )
                })
        })
    }

    /// The unqualified (or, for out-of-line C++ and Go methods, already qualified) name.
    fn name(&self, n: Node<'_>) -> Option<String> {
        match (self.lang, n.kind()) {
            (Lang::Rust, "impl_item") => {
                let ty = self.field_text(n, "type")?;
                Some(strip_generics(&ty))
            }
            (Lang::Go, "method_declaration") => {
                let name = self.field_text(n, "name")?;
                let recv = n.child_by_field_name("receiver").and_then(|r| {
                    let mut c = r.walk();
                    let p = r
                        .named_children(&mut c)
                        .find(|x| x.kind() == "parameter_declaration");
                    p.and_then(|p| self.field_text(p, "type"))
                });
                Some(match recv {
                    Some(t) => format!("{}.{name}", strip_generics(t.trim_start_matches('*'))),
                    None => name,
                })
            }
            (Lang::Go, "type_declaration") => {
                let mut c = n.walk();
                let spec = n.named_children(&mut c).find(|x| x.kind() == "type_spec")?;
                self.field_text(spec, "name")
            }
            (Lang::C | Lang::Cpp, "function_definition") => {
                self.declarator_name(n.child_by_field_name("declarator")?)
            }
            (Lang::C | Lang::Cpp, "declaration" | "type_definition") => {
                let spec = n.child_by_field_name("type")?;
                self.field_text(spec, "name")
                    .or_else(|| self.declarator_name(n.child_by_field_name("declarator")?))
            }
            (_, "lexical_declaration" | "variable_declaration") => {
                self.field_text(self.fn_declarator(n)?, "name")
            }
            (_, "field_definition") => self.field_text(n, "property"),
            _ => self.field_text(n, "name"),
        }
    }

    /// The name inside a C/C++ declarator chain (`*f(…)`, `Config::connect(…)`).
    fn declarator_name(&self, mut d: Node<'_>) -> Option<String> {
        for _ in 0..16 {
            match d.kind() {
                "identifier"
                | "field_identifier"
                | "qualified_identifier"
                | "destructor_name"
                | "operator_name"
                | "type_identifier"
                | "template_function" => {
                    return self.text(d);
                }
                _ => {}
            }
            d = match d.child_by_field_name("declarator") {
                Some(inner) => inner,
                None => d.named_child(0)?,
            };
        }
        None
    }
}

/// `Config<T>` → `Config`; `impl<T> Trait for X` types come in as just the type.
fn strip_generics(ty: &str) -> String {
    ty.split('<').next().unwrap_or(ty).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::chunk::split_lines;
    use super::*;

    fn symbols(lang: Lang, src: &str) -> Vec<(String, String, usize, usize)> {
        let lines = split_lines(src);
        let mut spans = symbol_spans(lang, src, &lines).expect("parses");
        spans.sort_by_key(|s| (s.start, s.end));
        spans
            .into_iter()
            .map(|s| {
                let sym = s.symbol.unwrap_or_default();
                let kind = s.symbol_kind.unwrap_or_default();
                (sym, kind, s.start + 1, s.end + 1)
            })
            .collect()
    }

    fn names(lang: Lang, src: &str) -> Vec<String> {
        symbols(lang, src).into_iter().map(|s| s.0).collect()
    }

    #[test]
    fn rust_impl_methods_are_qualified() {
        let src = "use std::fmt;\n\npub struct Config {\n    url: String,\n}\n\nimpl Config {\n    /// Connect.\n    pub fn connect(&self) -> bool {\n        true\n    }\n}\n\nfn main() {}\n";
        let s = symbols(Lang::Rust, src);
        assert!(
            s.contains(&("Config".into(), "struct".into(), 3, 5)),
            "{s:?}"
        );
        assert!(
            s.contains(&("Config::connect".into(), "method".into(), 8, 11)),
            "{s:?}"
        );
        assert!(s.contains(&("Config".into(), "impl".into(), 7, 7)), "{s:?}");
        assert!(
            s.contains(&("main".into(), "function".into(), 14, 14)),
            "{s:?}"
        );
        let docs = "impl P {\n    /// One.\n    /// Two.\n    #[inline]\n    fn a() {}\n    fn b() {} // tail\n    fn c() {}\n}\n";
        let s = symbols(Lang::Rust, docs);
        assert!(s.contains(&("P::a".into(), "method".into(), 2, 5)), "{s:?}");
        assert!(s.contains(&("P::c".into(), "method".into(), 7, 7)), "{s:?}");
    }

    #[test]
    fn other_languages() {
        let py = "import os\n\n@dataclass\nclass Repo:\n    name: str\n\n    def find(self):\n        return 1\n\ndef top():\n    pass\n";
        assert_eq!(names(Lang::Python, py), ["Repo", "Repo.find", "top"]);
        let py_spans = symbols(Lang::Python, py);
        assert_eq!(py_spans[0].2, 3, "decorator line belongs to the class");

        let ts = "export class CartService {\n  private n = 1;\n  getUserName(id: string): string {\n    return id;\n  }\n}\nexport const helper = () => 1;\ninterface Shape { x: number }\n";
        assert_eq!(
            names(Lang::TypeScript, ts),
            ["CartService", "CartService.getUserName", "helper", "Shape"]
        );

        let go = "package main\n\ntype Repo struct {\n\tdb int\n}\n\nfunc (r *Repo) Find() int {\n\treturn 1\n}\n\nfunc main() {}\n";
        assert_eq!(names(Lang::Go, go), ["Repo", "Repo.Find", "main"]);

        let php = "<?php\nnamespace App;\n\nclass Config {\n    private $dsn;\n    public function connect() {\n        return new PDO($this->dsn);\n    }\n}\n";
        assert_eq!(names(Lang::Php, php), ["Config", "Config::connect"]);

        let java =
            "class Billing {\n  int total;\n  Billing() {}\n  int sum(int a) { return a; }\n}\n";
        assert_eq!(
            names(Lang::Java, java),
            ["Billing", "Billing.Billing", "Billing.sum"]
        );

        let cpp = "#include <x>\nnamespace db {\nclass Conn {\n public:\n  void open() {}\n};\n}\nvoid Config::connect() {}\n";
        assert_eq!(
            names(Lang::Cpp, cpp),
            ["Conn", "Conn::open", "Config::connect"]
        );

        let c = "#ifndef X_H\n#define X_H\ntypedef struct {\n  int a;\n} Pool;\nstatic int *make(void) { return 0; }\n#endif\n";
        assert_eq!(names(Lang::C, c), ["Pool", "make"]);

        let sh = "#!/bin/bash\ndeploy() {\n  echo hi\n}\n";
        assert_eq!(names(Lang::Bash, sh), ["deploy"]);

        let js = "const x = require('x');\nclass A {\n  get() { return 1 }\n}\nfunction b() {}\n";
        assert_eq!(names(Lang::JavaScript, js), ["A", "A.get", "b"]);
    }

    #[test]
    fn broken_code_still_yields_spans() {
        let src = "fn ok() {}\nfn broken( {\n";
        let s = names(Lang::Rust, src);
        assert!(s.contains(&"ok".to_string()), "{s:?}");
    }
}
