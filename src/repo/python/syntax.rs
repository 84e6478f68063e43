//! One pass over a Python file's tree-sitter CST, producing a plain [`ModuleInfo`]: imports
//! (with aliases), module and class constants, functions (returns, locals, appends), classes
//! (bases, annotated fields), every call with its syntactic context (enclosing function,
//! loops, `try`, `with`), string literals with a label, and `if` statements.
//!
//! Nothing here resolves names across files; [`super::names`] does that.

use super::expr::Expr;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;
use tree_sitter::{Node, Parser, TreeCursor};

/// Field names the walker asks for, looked up once: `child_by_field_name` compares the name
/// against every field name of the grammar at each call.
const FIELD_NAMES: [&str; 22] = [
    "alias",
    "alternative",
    "arguments",
    "attribute",
    "body",
    "condition",
    "definition",
    "function",
    "key",
    "left",
    "module_name",
    "name",
    "object",
    "operator",
    "right",
    "subscript",
    "superclasses",
    "type",
    "value",
    "return_type",
    "parameters",
    "consequence",
];
const F_ALIAS: usize = 0;
const F_ALTERNATIVE: usize = 1;
const F_ARGUMENTS: usize = 2;
const F_ATTRIBUTE: usize = 3;
const F_BODY: usize = 4;
const F_CONDITION: usize = 5;
const F_DEFINITION: usize = 6;
const F_FUNCTION: usize = 7;
const F_KEY: usize = 8;
const F_LEFT: usize = 9;
const F_MODULE_NAME: usize = 10;
const F_NAME: usize = 11;
const F_OBJECT: usize = 12;
const F_OPERATOR: usize = 13;
const F_RIGHT: usize = 14;

const F_SUPERCLASSES: usize = 16;
const F_TYPE: usize = 17;
const F_VALUE: usize = 18;
const F_RETURN_TYPE: usize = 19;
const F_PARAMETERS: usize = 20;
const F_CONSEQUENCE: usize = 21;

static FIELD_IDS: LazyLock<[u16; 22]> = LazyLock::new(|| {
    crate::alloc::tree_sitter_to_mimalloc();
    let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    // 0 is never a field id: a missing name makes `child_by_field_id` return `None`.
    FIELD_NAMES.map(|n| lang.field_id_for_name(n).map_or(0, |id| id.get()))
});

/// Node kind names by symbol id: `Node::kind` looks the name up and re-validates it as UTF-8
/// (`strlen` + `from_utf8`) at every call, and the walker asks hundreds of thousands of times.
static KIND_NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    crate::alloc::tree_sitter_to_mimalloc();
    let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    (0..lang.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| lang.node_kind_for_id(id))
                .unwrap_or_default()
                .to_string()
        })
        .collect()
});

/// `n.kind()` through [`KIND_NAMES`].
fn kind<'a>(n: impl std::borrow::Borrow<Node<'a>>) -> &'static str {
    let n = n.borrow();
    KIND_NAMES
        .get(usize::from(n.kind_id()))
        .map_or("", String::as_str)
}

fn field_id(f: usize) -> u16 {
    FIELD_IDS[f]
}

/// `child_by_field_name` with the id looked up once.
trait FieldExt<'t> {
    fn field(&self, f: usize) -> Option<Node<'t>>;
}

impl<'t> FieldExt<'t> for Node<'t> {
    fn field(&self, f: usize) -> Option<Node<'t>> {
        self.child_by_field_id(field_id(f))
    }
}

/// Deepest CST nesting we walk; deeper subtrees are skipped with a note (no stack overflow).
const MAX_DEPTH: usize = 150;
/// Deepest expression nesting converted to [`Expr`].
const MAX_EXPR_DEPTH: usize = 24;
/// Longest string literal kept (longer ones are truncated).
const MAX_STRING: usize = 20_000;
/// Shortest string literal kept.
const MIN_STRING: usize = 6;

/// An enclosing `for` loop: its target names and iterable.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopCtx {
    pub vars: Vec<String>,
    pub iter: Expr,
}

/// One call expression and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    /// The callee as written (`os.system`, `builder.add_edge`), when it is a dotted name.
    pub callee: Option<String>,
    /// The attribute name for method calls (`add_edge`), or the bare function name.
    pub method: String,
    /// Source text of the receiver for method calls (`builder`, `self.graph`).
    pub receiver: Option<String>,
    pub args: Vec<Expr>,
    pub kwargs: Vec<(String, Expr)>,
    /// 1-based line of the call.
    pub line: usize,
    pub snippet: String,
    /// Index into [`ModuleInfo::functions`] of the innermost enclosing function.
    pub func: Option<usize>,
    pub loops: Vec<LoopCtx>,
    pub in_try: bool,
    pub in_loop: bool,
    /// Line of the innermost `try` whose body holds the call.
    pub try_line: Option<usize>,
    /// Inside an `except` clause (of the enclosing function).
    pub in_except: bool,
    /// Inside a `finally` clause.
    pub in_finally: bool,
    /// Inside a `while` loop.
    pub in_while: bool,
    /// Callees of the `with` items enclosing this call (`tempfile.TemporaryDirectory`).
    pub withs: Vec<String>,
    /// When the call's result is immediately used as the receiver of another method
    /// (`llm.with_structured_output(X).with_retry()`), that method's name.
    pub chained: Option<String>,
    /// Target of the assignment this call is the right-hand side of.
    pub assigned_to: Option<String>,
    /// Inside an `except` clause: the line of its `try` and the clause's exception types as
    /// written (empty for a bare `except:`).
    pub handler: Option<(usize, String)>,
    /// The call is the value of a `return` statement (`return llm.with_structured_output(X)`).
    pub returned: bool,
}

/// A function or method definition.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FuncInfo {
    pub name: String,
    /// `Class.method` for methods, else the name.
    pub qualname: String,
    pub line: usize,
    pub end_line: usize,
    pub decorators: Vec<String>,
    /// Parameter names in order (`self` included; `*args`/`**kwargs` without the stars).
    pub params: Vec<String>,
    /// Default values of the parameters that have one (`full: bool = False`).
    pub defaults: BTreeMap<String, Expr>,
    pub returns: Vec<Expr>,
    /// The return annotation (`-> Command[Literal["a", "b"]]`).
    pub return_type: Option<Expr>,
    /// Local `name = expr` assignments (every assigned value).
    pub locals: BTreeMap<String, Vec<Expr>>,
    /// Attribute assignments `obj.attr = expr`: (target as written, value, line).
    pub attributes: Vec<(String, Expr, usize)>,
    /// Values appended to local lists (`x.append(e)`, `x.extend([...])`, `x += [...]`).
    pub appends: BTreeMap<String, Vec<Expr>>,
    pub has_try: bool,
    pub has_loop: bool,
    /// Source text of the `except` clause types.
    pub excepts: Vec<String>,
}

/// An annotated field in a class body (`name: Annotated[list, operator.add] = ...`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldInfo {
    pub name: String,
    pub line: usize,
    pub annotation_text: String,
    pub annotation: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClassInfo {
    pub name: String,
    pub line: usize,
    pub end_line: usize,
    /// Base classes as written (`BaseModel`, `pydantic.BaseModel`, `TypedDict`).
    pub bases: Vec<String>,
    pub fields: Vec<FieldInfo>,
}

/// A string literal with the context that names it.
#[derive(Debug, Clone, PartialEq)]
pub struct StringLit {
    pub text: String,
    pub line: usize,
    /// Assignment target, dict key or keyword name the string is bound to, if any.
    pub label: String,
    /// Enclosing function and class names.
    pub scope: String,
    pub fstring: bool,
    pub docstring: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IfInfo {
    pub line: usize,
    pub func: Option<usize>,
    pub condition: String,
    /// The whole `if` statement's text, truncated.
    pub text: String,
    /// This branch's own block (without the `elif`/`else` that follow), truncated.
    pub body: String,
}

/// Everything extracted from one Python file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModuleInfo {
    /// Repo-relative path.
    pub path: String,
    /// Dotted module name derived from the path (`src.nodes.judges`).
    pub module: String,
    pub source: String,
    /// Local name → qualified name (`SG` → `langgraph.graph.StateGraph`).
    pub imports: BTreeMap<String, String>,
    /// Module-level `NAME = expr` and class-level `Class.NAME = expr`.
    pub constants: BTreeMap<String, Expr>,
    pub functions: Vec<FuncInfo>,
    pub classes: Vec<ClassInfo>,
    pub calls: Vec<CallInfo>,
    pub strings: Vec<StringLit>,
    pub ifs: Vec<IfInfo>,
    /// The parser recovered from syntax errors.
    pub syntax_errors: bool,
    /// Walk limits hit.
    pub truncated: bool,
}

impl ModuleInfo {
    /// The trimmed text of a 1-based line.
    pub fn line_text(&self, line: usize) -> &str {
        self.source
            .lines()
            .nth(line.saturating_sub(1))
            .map(str::trim)
            .unwrap_or("")
    }

    /// Lines `from..=to` (1-based), capped at `max` lines.
    pub fn snippet(&self, from: usize, to: usize, max: usize) -> String {
        let to = to.min(from + max.saturating_sub(1));
        self.source
            .lines()
            .skip(from.saturating_sub(1))
            .take(to + 1 - from.min(to))
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn function(&self, name: &str) -> Option<&FuncInfo> {
        self.functions
            .iter()
            .rev()
            .find(|f| f.name == name || f.qualname == name)
    }
}

/// `src/nodes/judges.py` → `src.nodes.judges`; `pkg/__init__.py` → `pkg`.
pub fn module_name(path: &str) -> String {
    let stem = path.strip_suffix(".py").unwrap_or(path);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}

/// A source line's indentation, in bytes.
pub fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines that open the blocks line `line` (1-based) of `lines` sits in, innermost first,
/// found by indentation: each as (0-based index, indentation). Blank lines and comments are
/// skipped; the walk looks no higher than index `floor` and stops at the top level.
pub fn enclosing_lines<'l>(lines: &'l [&'l str], line: usize, floor: usize) -> EnclosingLines<'l> {
    EnclosingLines {
        lines,
        n: line.saturating_sub(1),
        level: lines
            .get(line.saturating_sub(1))
            .map_or(0, |t| indentation(t)),
        floor,
    }
}

/// See [`enclosing_lines`].
pub struct EnclosingLines<'l> {
    lines: &'l [&'l str],
    /// The last line looked at.
    n: usize,
    /// The indentation an enclosing line must be under.
    level: usize,
    floor: usize,
}

impl Iterator for EnclosingLines<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        while self.n > self.floor && self.level > 0 {
            self.n -= 1;
            let t = self.lines[self.n];
            if t.trim().is_empty()
                || t.trim_start().starts_with('#')
                || indentation(t) >= self.level
            {
                continue;
            }
            self.level = indentation(t);
            return Some((self.n, self.level));
        }
        None
    }
}

/// The one cut of a text at a byte budget (kept under this name for the analysis code).
pub use crate::text::cut as truncate;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Why a Python file could not be parsed at all (tree-sitter itself could not run).
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("cannot load the Python grammar: {0}")]
    Grammar(#[source] tree_sitter::LanguageError),
    #[error("tree-sitter gave up on {0}")]
    GaveUp(String),
}

/// A Python parser. The only way this crate makes one: tree-sitter's allocator must be set
/// before any tree-sitter object exists ([`crate::alloc::tree_sitter_to_mimalloc`]).
pub fn new_parser() -> Result<Parser, ParseError> {
    crate::alloc::tree_sitter_to_mimalloc();
    let mut p = Parser::new();
    p.set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(ParseError::Grammar)?;
    Ok(p)
}

/// Parses one file and extracts its [`ModuleInfo`]. An error only when tree-sitter itself
/// cannot run.
pub fn parse_module(path: &str, source: String) -> Result<ModuleInfo, ParseError> {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match slot.take() {
            Some(p) => slot.insert(p),
            None => slot.insert(new_parser()?),
        };
        parser
            .parse(source.as_bytes(), None)
            .ok_or_else(|| ParseError::GaveUp(path.to_string()))
    })?;
    let line_starts = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let root = tree.root_node();
    let mut w = Walker {
        cursor: RefCell::new(root.walk()),
        line_starts,
        src: &source,
        memo: RefCell::new(HashMap::new()),
        expr_limits_hit: Cell::new(0),
        info: ModuleInfo {
            path: path.to_string(),
            module: module_name(path),
            // At most one call per `(`: no regrowing (a `CallInfo` is ~270 bytes).
            calls: Vec::with_capacity(source.bytes().filter(|b| *b == b'(').count()),
            ..ModuleInfo::default()
        },
    };
    w.info.syntax_errors = root.has_error();
    let mut scope = Scope::default();
    w.walk(root, &mut scope, 0);
    let mut info = w.info;
    info.source = source;
    Ok(info)
}

#[derive(Default)]
struct Scope {
    func: Option<usize>,
    class: Option<String>,
    loops: Vec<LoopCtx>,
    in_try: bool,
    in_loop: bool,
    try_line: Option<usize>,
    in_except: bool,
    in_finally: bool,
    in_while: bool,
    withs: Vec<String>,
    label: String,
    assigned_to: Option<String>,
    /// The innermost `except` clause holding the walk: its `try`'s line and exception types.
    handler: Option<(usize, String)>,
    /// Byte range of the value of the `return` statement being walked.
    returning: Option<std::ops::Range<usize>>,
    /// Byte range of a call that is the receiver of a method call, and that method's name.
    chain: Option<(std::ops::Range<usize>, String)>,
}

impl Scope {
    fn at_module_level(&self) -> bool {
        self.func.is_none() && self.class.is_none()
    }
}

/// A call's converted positional and keyword arguments.
type CallArgs = (Vec<Expr>, Vec<(String, Expr)>);

struct Walker<'s, 't> {
    src: &'s str,
    /// One cursor reused for every child listing (a fresh cursor allocates its stack).
    cursor: RefCell<TreeCursor<'t>>,
    /// Arguments of calls converted as part of an enclosing expression, by node id, taken by
    /// [`Walker::call`] when the walk reaches the call.
    memo: RefCell<HashMap<usize, CallArgs>>,
    /// How many times expression conversion stopped at [`MAX_EXPR_DEPTH`].
    expr_limits_hit: Cell<usize>,
    info: ModuleInfo,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

/// A node's named children (a `Vec`: inline storage would grow every recursive frame).
type Kids<'t> = Vec<Node<'t>>;

fn line_of(n: Node<'_>) -> usize {
    n.start_position().row + 1
}

impl<'s, 't> Walker<'s, 't> {
    /// The text of a 1-based line (without its newline), in O(1).
    fn line(&self, line: usize) -> &'s str {
        let Some(start) = self.line_starts.get(line.saturating_sub(1)).copied() else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.src.len());
        self.src
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }

    /// The named children of `n`. `named_child(i)` restarts from the first child but each
    /// step is cheap; the cursor pays ~500 instructions per sibling step (hidden grammar
    /// nodes), so it is kept for wide nodes only. Measured with callgrind on 60 generated
    /// modules: listing children went from 167 M to 77 M instructions.
    fn kids(&self, n: Node<'t>) -> Kids<'t> {
        let count = n.named_child_count();
        if count <= 12 {
            return (0..count as u32).filter_map(|i| n.named_child(i)).collect();
        }
        let mut c = self.cursor.borrow_mut();
        n.named_children(&mut c).collect()
    }

    fn text(&self, n: Node<'t>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn short(&self, n: Node<'t>, max: usize) -> String {
        let t = self.text(n);
        crate::text::cut(t, max)
    }

    /// Records what `node` says about the module (one step per kind of statement or
    /// expression that carries a fact), then walks on into its children.
    fn walk(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if depth > MAX_DEPTH {
            self.info.truncated = true;
            return;
        }
        match kind(node) {
            "comment" => {}
            "import_statement" => self.import(node),
            "import_from_statement" => self.import_from(node),
            "future_import_statement" => {}
            "decorated_definition" => self.decorated(node, scope, depth),
            "function_definition" => self.function(node, scope, depth, Vec::new()),
            "class_definition" => self.class(node, scope, depth),
            "for_statement" => self.for_statement(node, scope, depth),
            "while_statement" => self.while_statement(node, scope, depth),
            "try_statement" => self.try_statement(node, scope, depth),
            "with_statement" => self.with_statement(node, scope, depth),
            "if_statement" | "elif_clause" => self.branch(node, scope, depth),
            "return_statement" => self.return_statement(node, scope, depth),
            "expression_statement" => self.expression_statement(node, scope, depth),
            "assignment" => self.assignment(node, scope, depth),
            "augmented_assignment" => self.augmented_assignment(node, scope, depth),
            "pair" => self.pair(node, scope, depth),
            "keyword_argument" => self.keyword_argument(node, scope, depth),
            "string" | "concatenated_string" => {
                self.string(node, scope, false);
                self.interpolations(node, scope, depth);
            }
            "call" => self.call_node(node, scope, depth),
            _ => self.walk_children(node, scope, depth),
        }
    }

    /// A decorated function or class: its decorators' text kept with the function.
    fn decorated(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let decorators: Vec<String> = self
            .kids(node)
            .into_iter()
            .filter(|k| kind(k) == "decorator")
            .map(|k| self.short(k, 200))
            .collect();
        if let Some(def) = node.field(F_DEFINITION) {
            match kind(def) {
                "function_definition" => self.function(def, scope, depth, decorators),
                "class_definition" => self.class(def, scope, depth),
                _ => self.walk_children(def, scope, depth),
            }
        }
    }

    /// A `for` loop: its body walked with the loop's variables and iterable in scope.
    fn for_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let vars = node
            .field(F_LEFT)
            .map(|l| self.target_names(l))
            .unwrap_or_default();
        let iter = node
            .field(F_RIGHT)
            .map(|r| self.expr(r, 0))
            .unwrap_or(Expr::None);
        if let Some(r) = node.field(F_RIGHT) {
            self.walk(r, scope, depth + 1);
        }
        if let Some(f) = scope.func {
            self.info.functions[f].has_loop = true;
        }
        if let Some(b) = node.field(F_BODY) {
            scope.loops.push(LoopCtx { vars, iter });
            let in_loop = std::mem::replace(&mut scope.in_loop, true);
            self.walk(b, scope, depth + 1);
            scope.in_loop = in_loop;
            scope.loops.pop();
        }
        if let Some(a) = node.field(F_ALTERNATIVE) {
            self.walk(a, scope, depth + 1);
        }
    }

    /// A `while` loop: its children walked inside a loop.
    fn while_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if let Some(f) = scope.func {
            self.info.functions[f].has_loop = true;
        }
        let in_loop = std::mem::replace(&mut scope.in_loop, true);
        let in_while = std::mem::replace(&mut scope.in_while, true);
        self.walk_children(node, scope, depth);
        scope.in_loop = in_loop;
        scope.in_while = in_while;
    }

    /// A `try` statement: its body walked inside the `try`, each clause inside its own kind
    /// (an `except` clause with what it catches).
    fn try_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if let Some(f) = scope.func {
            self.info.functions[f].has_try = true;
        }
        for k in self.kids(node) {
            if kind(k) == "block" {
                let in_try = std::mem::replace(&mut scope.in_try, true);
                let try_line = scope.try_line.replace(line_of(node));
                self.walk(k, scope, depth + 1);
                scope.in_try = in_try;
                scope.try_line = try_line;
            } else {
                self.try_clause(node, k, scope, depth);
            }
        }
    }

    /// A clause of the `try` statement `node` (`except`, `else`, `finally`).
    fn try_clause(&mut self, node: Node<'t>, k: Node<'t>, scope: &mut Scope, depth: usize) {
        let mut handler = scope.handler.clone();
        if kind(k) == "except_clause" {
            let t = match k.field(F_VALUE) {
                Some(v) => self.short(v, 200),
                None => self
                    .kids(k)
                    .into_iter()
                    .find(|c| kind(c) != "block" && kind(c) != "comment")
                    .map(|c| self.short(c, 200))
                    .unwrap_or_default(),
            };
            if let Some(f) = scope.func {
                self.info.functions[f].excepts.push(t.clone());
            }
            handler = Some((line_of(node), t));
        }
        let (except, finally) = (scope.in_except, scope.in_finally);
        scope.in_except = except || kind(k) == "except_clause";
        scope.in_finally = finally || kind(k) == "finally_clause";
        let outer = std::mem::replace(&mut scope.handler, handler);
        self.walk(k, scope, depth + 1);
        scope.handler = outer;
        scope.in_except = except;
        scope.in_finally = finally;
    }

    /// A `with` statement: its body walked with the context managers it calls in scope.
    fn with_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let mut withs = Vec::new();
        for k in self.kids(node) {
            if kind(k) == "with_clause" {
                for item in self.kids(k) {
                    if let Some(v) = item.field(F_VALUE) {
                        let call = if kind(v) == "as_pattern" {
                            self.kids(v).into_iter().next()
                        } else {
                            Some(v)
                        };
                        if let Some(c) = call.filter(|c| kind(c) == "call")
                            && let Some(f) = c.field(F_FUNCTION)
                        {
                            withs.push(self.short(f, 120));
                        }
                    }
                    self.walk(item, scope, depth + 1);
                }
            }
        }
        let outer = scope.withs.len();
        scope.withs.extend(withs);
        for k in self.kids(node) {
            if kind(k) == "block" {
                self.walk(k, scope, depth + 1);
            }
        }
        scope.withs.truncate(outer);
    }

    /// An `if` or `elif` branch: recorded with its condition and body.
    fn branch(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let condition = node
            .field(F_CONDITION)
            .map(|c| self.short(c, 300))
            .unwrap_or_default();
        let body = node
            .field(F_CONSEQUENCE)
            .map(|c| self.short(c, 600))
            .unwrap_or_default();
        self.info.ifs.push(IfInfo {
            line: line_of(node),
            func: scope.func,
            condition,
            text: self.short(node, 600),
            body,
        });
        self.walk_children(node, scope, depth);
    }

    /// A `return`: its value recorded with the function, and walked as the returned value.
    fn return_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let mut value = self.kids(node).into_iter().next();
        if let Some(f) = scope.func {
            let e = value.map(|v| self.expr(v, 0)).unwrap_or(Expr::None);
            self.info.functions[f].returns.push(e);
        }
        // `return (x)`: the value inside the parentheses
        while let Some(v) = value.filter(|v| kind(*v) == "parenthesized_expression") {
            value = self.kids(v).into_iter().find(|k| kind(*k) != "comment");
        }
        let outer = std::mem::replace(&mut scope.returning, value.map(|v| v.byte_range()));
        self.walk_children(node, scope, depth);
        scope.returning = outer;
    }

    /// An expression statement: a lone string is a docstring.
    fn expression_statement(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let kids = self.kids(node);
        if kids.len() == 1 && matches!(kind(kids[0]), "string" | "concatenated_string") {
            self.string(kids[0], scope, true);
            self.interpolations(kids[0], scope, depth);
        } else {
            for k in kids {
                self.walk(k, scope, depth + 1);
            }
        }
    }

    /// `name += value` in a function: what is appended to `name`.
    fn augmented_assignment(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if let (Some(f), Some(l), Some(r)) = (scope.func, node.field(F_LEFT), node.field(F_RIGHT))
            && kind(l) == "identifier"
            && self.text(node).contains("+=")
        {
            let name = self.text(l).to_string();
            let added = match self.expr(r, 0) {
                Expr::List(items) => items,
                other => vec![other],
            };
            self.info.functions[f]
                .appends
                .entry(name)
                .or_default()
                .extend(added);
        }
        self.walk_children(node, scope, depth);
    }

    /// A dict entry: its value walked under the key's label.
    fn pair(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if let Some(v) = node.field(F_VALUE) {
            let label = match node.field(F_KEY) {
                Some(k) => {
                    let mut l = self.expr(k, 0).as_str().unwrap_or("").to_string();
                    if l.is_empty() {
                        l = self.short(k, 80);
                    }
                    l
                }
                None => scope.label.clone(),
            };
            let outer = std::mem::replace(&mut scope.label, label);
            self.walk(v, scope, depth + 1);
            scope.label = outer;
        }
    }

    /// A keyword argument: its value walked under the keyword's label.
    fn keyword_argument(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if let Some(v) = node.field(F_VALUE) {
            let label = match node.field(F_NAME) {
                Some(n) => self.text(n).to_string(),
                None => scope.label.clone(),
            };
            let outer = std::mem::replace(&mut scope.label, label);
            self.walk(v, scope, depth + 1);
            scope.label = outer;
        }
    }

    /// A call: recorded (see [`Walker::call`]), then its children walked as part of it (a
    /// method called on the call's result: the chain).
    fn call_node(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        // Each field looked up once (a lookup scans the node's children).
        let func = node.field(F_FUNCTION);
        let (obj, attr) = match func {
            Some(f) if kind(f) == "attribute" => (f.field(F_OBJECT), f.field(F_ATTRIBUTE)),
            _ => (None, None),
        };
        self.call(node, func, obj, attr, scope);
        let chain = match (obj, attr) {
            (Some(o), Some(a)) if kind(o) == "call" => {
                Some((o.byte_range(), self.text(a).to_string()))
            }
            _ => None,
        };
        let outer_assigned = scope.assigned_to.take();
        let outer_chain = std::mem::replace(&mut scope.chain, chain);
        self.walk_children(node, scope, depth);
        scope.assigned_to = outer_assigned;
        scope.chain = outer_chain;
    }

    fn walk_children(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        for k in self.kids(node) {
            self.walk(k, scope, depth + 1);
        }
    }

    fn import(&mut self, node: Node<'t>) {
        for k in self.kids(node) {
            match kind(k) {
                "dotted_name" => {
                    let full = self.text(k).to_string();
                    let first = full.split('.').next().unwrap_or("").to_string();
                    self.info.imports.insert(first.clone(), first);
                }
                "aliased_import" => {
                    if let (Some(n), Some(a)) = (k.field(F_NAME), k.field(F_ALIAS)) {
                        self.info
                            .imports
                            .insert(self.text(a).to_string(), self.text(n).to_string());
                    }
                }
                _ => {}
            }
        }
    }

    fn import_from(&mut self, node: Node<'t>) {
        let Some(m) = node.field(F_MODULE_NAME) else {
            return;
        };
        let base = if kind(m) == "relative_import" {
            let raw = self.text(m);
            let dots = raw.chars().take_while(|c| *c == '.').count();
            let rest = raw[dots..].trim();
            let mut pkg: Vec<&str> = self.info.module.split('.').collect();
            if !self.info.path.ends_with("__init__.py") {
                pkg.pop();
            }
            for _ in 1..dots {
                pkg.pop();
            }
            let mut parts: Vec<String> = pkg.iter().map(|s| s.to_string()).collect();
            if !rest.is_empty() {
                parts.push(rest.to_string());
            }
            parts.join(".")
        } else {
            self.text(m).to_string()
        };
        let qualify = |name: &str| {
            if base.is_empty() {
                name.to_string()
            } else {
                format!("{base}.{name}")
            }
        };
        if self.kids(node).iter().any(|k| kind(k) == "wildcard_import") {
            self.info.imports.insert(format!("*{base}"), base.clone());
        }
        let mut c = node.walk();
        for k in node.children_by_field_name("name", &mut c) {
            match kind(k) {
                "dotted_name" => {
                    let n = self.text(k).to_string();
                    self.info.imports.insert(n.clone(), qualify(&n));
                }
                "aliased_import" => {
                    if let (Some(n), Some(a)) = (k.field(F_NAME), k.field(F_ALIAS)) {
                        let q = qualify(self.text(n));
                        self.info.imports.insert(self.text(a).to_string(), q);
                    }
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, node: Node<'t>, scope: &Scope, depth: usize, decorators: Vec<String>) {
        let name = node
            .field(F_NAME)
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let qualname = match &scope.class {
            Some(c) if scope.func.is_none() => format!("{c}.{name}"),
            _ => name.clone(),
        };
        let params = node
            .field(F_PARAMETERS)
            .map(|ps| {
                self.kids(ps)
                    .into_iter()
                    .filter_map(|p| match kind(p) {
                        "identifier" => Some(self.text(p).to_string()),
                        _ => p
                            .field(F_NAME)
                            .or_else(|| self.kids(p).into_iter().find(|k| kind(k) == "identifier"))
                            .map(|n| self.text(n).to_string()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let defaults = node
            .field(F_PARAMETERS)
            .map(|ps| {
                self.kids(ps)
                    .into_iter()
                    .filter(|p| matches!(kind(p), "default_parameter" | "typed_default_parameter"))
                    .filter_map(|p| {
                        let name = p.field(F_NAME)?;
                        let value = p.field(F_VALUE)?;
                        Some((self.text(name).to_string(), self.expr(value, 0)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let idx = self.info.functions.len();
        self.info.functions.push(FuncInfo {
            name,
            qualname,
            line: line_of(node),
            end_line: node.end_position().row + 1,
            decorators,
            params,
            defaults,
            return_type: node.field(F_RETURN_TYPE).map(|t| self.type_expr(t, 0)),
            ..FuncInfo::default()
        });
        let mut inner = Scope {
            func: Some(idx),
            class: scope.class.clone(),
            ..Scope::default()
        };
        // Default values and decorators may hold calls too, but the body is what matters.
        if let Some(b) = node.field(F_BODY) {
            self.walk(b, &mut inner, depth + 1);
        }
    }

    fn class(&mut self, node: Node<'t>, scope: &Scope, depth: usize) {
        let name = node
            .field(F_NAME)
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let bases = node
            .field(F_SUPERCLASSES)
            .map(|s| {
                self.kids(s)
                    .into_iter()
                    .filter(|k| kind(k) != "keyword_argument")
                    .map(|k| match kind(k) {
                        // `Generic[T]`-style bases: keep the subscripted name.
                        "subscript" => k
                            .field(F_VALUE)
                            .map(|v| self.text(v).to_string())
                            .unwrap_or_default(),
                        _ => self.text(k).to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(body) = node.field(F_BODY) {
            for stmt in self.kids(body) {
                if kind(stmt) != "expression_statement" {
                    continue;
                }
                for a in self.kids(stmt) {
                    if kind(a) != "assignment" {
                        continue;
                    }
                    let Some(left) = a.field(F_LEFT) else {
                        continue;
                    };
                    if kind(left) != "identifier" {
                        continue;
                    }
                    let fname = self.text(left).to_string();
                    if let Some(t) = a.field(F_TYPE) {
                        fields.push(FieldInfo {
                            name: fname.clone(),
                            line: line_of(a),
                            annotation_text: self.short(t, 300),
                            annotation: self.type_expr(t, 0),
                        });
                    }
                    if let Some(r) = a.field(F_RIGHT) {
                        let e = self.expr(r, 0);
                        self.info.constants.insert(format!("{name}.{fname}"), e);
                    }
                }
            }
        }
        self.info.classes.push(ClassInfo {
            name: name.clone(),
            line: line_of(node),
            end_line: node.end_position().row + 1,
            bases,
            fields,
        });
        let mut inner = Scope {
            func: scope.func,
            class: Some(name),
            ..Scope::default()
        };
        if let Some(b) = node.field(F_BODY) {
            self.walk(b, &mut inner, depth + 1);
        }
    }

    fn assignment(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        let left = node.field(F_LEFT);
        let right = node.field(F_RIGHT);
        let target = left.map(|l| self.short(l, 120)).unwrap_or_default();
        if let (Some(l), Some(r), Some(f)) = (left, right, scope.func)
            && kind(l) == "attribute"
        {
            let e = self.expr(r, 0);
            self.info.functions[f]
                .attributes
                .push((target.clone(), e, line_of(node)));
        }
        if let (Some(l), Some(r)) = (left, right)
            && kind(l) == "identifier"
        {
            let e = self.expr(r, 0);
            if scope.at_module_level() {
                self.info.constants.insert(target.clone(), e);
            } else if let Some(f) = scope.func {
                self.info.functions[f]
                    .locals
                    .entry(target.clone())
                    .or_default()
                    .push(e);
            }
        }
        if let Some(r) = right {
            let outer_label = std::mem::replace(&mut scope.label, target.clone());
            let outer_assigned = scope.assigned_to.replace(target);
            self.walk(r, scope, depth + 1);
            scope.label = outer_label;
            scope.assigned_to = outer_assigned;
        }
    }

    fn string(&mut self, node: Node<'t>, scope: &Scope, docstring: bool) {
        let (text, fstring) = self.string_value(node);
        if text.chars().count() < MIN_STRING {
            return;
        }
        let mut sc = String::new();
        if let Some(f) = scope.func {
            sc.push_str(&self.info.functions[f].qualname);
        }
        if let Some(c) = &scope.class {
            sc.push(' ');
            sc.push_str(c);
        }
        self.info.strings.push(StringLit {
            text: crate::text::cut(&text, MAX_STRING),
            line: line_of(node),
            label: scope.label.clone(),
            scope: sc,
            fstring,
            docstring,
        });
    }

    /// The expressions inside an f-string's `{...}` (of each part of a concatenated string,
    /// and of a nested format spec), walked like any other: their calls run, their reads read.
    /// Their values are not what an enclosing assignment assigns.
    fn interpolations(&mut self, node: Node<'t>, scope: &mut Scope, depth: usize) {
        if depth > MAX_DEPTH {
            self.info.truncated = true;
            return;
        }
        for k in self.kids(node) {
            match kind(k) {
                "string" => self.interpolations(k, scope, depth + 1),
                // a `{...}` inside a format spec is a `format_expression`
                "interpolation" | "format_expression" => {
                    let outer = scope.assigned_to.take();
                    for e in self.kids(k) {
                        match kind(e) {
                            "format_specifier" => self.interpolations(e, scope, depth + 1),
                            "type_conversion" | "comment" => {}
                            _ => self.walk(e, scope, depth + 1),
                        }
                    }
                    scope.assigned_to = outer;
                }
                _ => {}
            }
        }
    }

    /// The content of a string or concatenated string, without quotes and prefixes.
    fn string_value(&self, node: Node<'t>) -> (String, bool) {
        if kind(node) == "concatenated_string" {
            let mut out = String::new();
            let mut f = false;
            for k in self.kids(node) {
                let (t, kf) = self.string_value(k);
                out.push_str(&t);
                f |= kf;
            }
            return (out, f);
        }
        let mut out = String::new();
        let mut f = false;
        for k in self.kids(node) {
            match kind(k) {
                "string_content" | "escape_sequence" => out.push_str(self.text(k)),
                "interpolation" => {
                    f = true;
                    out.push_str(self.text(k));
                }
                _ => {}
            }
        }
        (out, f)
    }

    /// Records a call; `func` is its `function` field and, when that is an attribute,
    /// `obj`/`attr` are the attribute's fields.
    fn call(
        &mut self,
        node: Node<'t>,
        func: Option<Node<'t>>,
        obj: Option<Node<'t>>,
        attr: Option<Node<'t>>,
        scope: &Scope,
    ) {
        let Some(func) = func else {
            return;
        };
        let (callee, method, receiver) = match kind(func) {
            "identifier" => {
                let t = self.text(func).to_string();
                (Some(t.clone()), t, None)
            }
            "attribute" => {
                let attr = attr.map(|a| self.text(a)).unwrap_or_default();
                // `self.dotted(func, 0)` without looking the fields up again.
                let callee = obj.and_then(|o| self.dotted(o, 1)).map(|mut d| {
                    d.push('.');
                    d.push_str(attr);
                    d
                });
                (callee, attr.to_string(), obj.map(|o| self.short(o, 120)))
            }
            _ => (None, String::new(), None),
        };
        // Converted already when this call sits inside an expression converted before (an
        // assignment's value, an enclosing call's argument): reuse, don't convert again.
        let (args, kwargs) = match self.memo.get_mut().remove(&node.id()) {
            Some(done) => done,
            None => self.call_args(node, 0),
        };
        // Set by the enclosing call when this call is its receiver (`x.f(a).g()`); avoids
        // `Node::parent`, which walks down from the root.
        let chained = scope
            .chain
            .as_ref()
            .filter(|(range, _)| *range == node.byte_range())
            .map(|(_, m)| m.clone());
        if let Some(f) = scope.func
            && let Some(recv) = &receiver
            && (method == "append" || method == "extend")
            && !recv.contains('.')
            && let Some(first) = args.first()
        {
            let added = match (method.as_str(), first.clone()) {
                ("extend", Expr::List(items)) => items,
                (_, other) => vec![other],
            };
            self.info.functions[f]
                .appends
                .entry(recv.clone())
                .or_default()
                .extend(added);
        }
        self.info.calls.push(CallInfo {
            callee,
            method,
            receiver,
            args,
            kwargs,
            line: line_of(node),
            snippet: crate::text::cut(self.line(line_of(node)).trim(), 200),
            func: scope.func,
            loops: scope.loops.clone(),
            in_try: scope.in_try,
            in_loop: scope.in_loop,
            try_line: scope.try_line,
            in_except: scope.in_except,
            in_finally: scope.in_finally,
            in_while: scope.in_while,
            withs: scope.withs.clone(),
            chained,
            assigned_to: scope.assigned_to.clone(),
            handler: scope.handler.clone(),
            returned: scope.returning.as_ref() == Some(&node.byte_range()),
        });
    }

    fn target_names(&self, n: Node<'t>) -> Vec<String> {
        match kind(n) {
            "identifier" => vec![self.text(n).to_string()],
            "pattern_list" | "tuple_pattern" | "list_pattern" => self
                .kids(n)
                .into_iter()
                .flat_map(|k| self.target_names(k))
                .collect(),
            _ => vec![self.short(n, 60)],
        }
    }

    /// A type annotation (`type` node) as an expression; `generic_type` becomes a subscript.
    fn type_expr(&self, n: Node<'t>, depth: usize) -> Expr {
        if depth > MAX_EXPR_DEPTH {
            self.expr_limits_hit.set(self.expr_limits_hit.get() + 1);
            return Expr::Other(self.short(n, 80));
        }
        match kind(n) {
            "type" => match self.kids(n).into_iter().next() {
                Some(k) => self.type_expr(k, depth + 1),
                None => Expr::Other(self.short(n, 80)),
            },
            "generic_type" => {
                let kids = self.kids(n);
                let head = kids
                    .first()
                    .map(|k| self.type_expr(k.to_owned(), depth + 1))
                    .unwrap_or(Expr::None);
                let mut params = Vec::new();
                for k in kids.iter().skip(1) {
                    if kind(k) == "type_parameter" {
                        // A comment after a parameter (`operator.ior  # merge`) is no parameter.
                        for t in self.kids(*k).into_iter().filter(|t| kind(t) != "comment") {
                            params.push(self.type_expr(t, depth + 1));
                        }
                    }
                }
                Expr::Subscript(Box::new(head), params)
            }
            _ => self.expr(n, depth + 1),
        }
    }

    /// Positional and keyword arguments of a call node, converted at `depth`.
    fn call_args(&self, n: Node<'t>, depth: usize) -> CallArgs {
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        if let Some(a) = n.field(F_ARGUMENTS) {
            if kind(a) == "argument_list" {
                for k in self.kids(a) {
                    match kind(k) {
                        "keyword_argument" => {
                            if let (Some(kn), Some(v)) = (k.field(F_NAME), k.field(F_VALUE)) {
                                kwargs.push((self.text(kn).to_string(), self.expr(v, depth)));
                            }
                        }
                        "comment" => {}
                        _ => args.push(self.expr(k, depth)),
                    }
                }
            } else {
                args.push(self.expr(a, depth));
            }
        }
        (args, kwargs)
    }

    /// `self.expr(n, depth).dotted()` without building the expression.
    fn dotted(&self, n: Node<'t>, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match kind(n) {
            "identifier" => Some(self.text(n).to_string()),
            "attribute" => {
                let mut obj = self.dotted(n.field(F_OBJECT)?, depth + 1)?;
                obj.push('.');
                if let Some(a) = n.field(F_ATTRIBUTE) {
                    obj.push_str(self.text(a));
                }
                Some(obj)
            }
            // never a dotted name
            "call" | "string" | "concatenated_string" | "subscript" | "list" | "dictionary" => None,
            _ => self.expr(n, depth).dotted(),
        }
    }

    fn expr(&self, n: Node<'t>, depth: usize) -> Expr {
        if depth > MAX_EXPR_DEPTH {
            self.expr_limits_hit.set(self.expr_limits_hit.get() + 1);
            return Expr::Other(self.short(n, 80));
        }
        let d = depth + 1;
        match kind(n) {
            "string" | "concatenated_string" => {
                let (value, fstring) = self.string_value(n);
                Expr::Str { value, fstring }
            }
            "integer" | "float" => Expr::Num(self.text(n).to_string()),
            "true" => Expr::Bool(true),
            "false" => Expr::Bool(false),
            "none" => Expr::None,
            "identifier" => Expr::Name(self.text(n).to_string()),
            "attribute" => {
                let obj = self.field_expr(n, F_OBJECT, d);
                let attr = n
                    .field(F_ATTRIBUTE)
                    .map(|a| self.text(a).to_string())
                    .unwrap_or_default();
                Expr::Attr(Box::new(obj), attr)
            }
            "call" => self.call_expr(n, d),
            "list" | "tuple" | "set" | "expression_list" | "pattern_list" => Expr::List(
                self.kids(n)
                    .into_iter()
                    .filter(|k| kind(k) != "comment")
                    .map(|k| self.expr(k, d))
                    .collect(),
            ),
            "dictionary" => Expr::Dict(
                self.kids(n)
                    .into_iter()
                    .filter(|k| kind(k) == "pair")
                    .map(|p| (self.field_expr(p, F_KEY, d), self.field_expr(p, F_VALUE, d)))
                    .collect(),
            ),
            "list_comprehension" | "set_comprehension" | "generator_expression" => {
                self.comprehension_expr(n, d)
            }
            "conditional_expression" => {
                let kids = self.kids(n);
                // `a if cond else b`: children are a, cond, b.
                let mut alts = Vec::new();
                if let Some(a) = kids.first() {
                    alts.push(self.expr(*a, d));
                }
                if let Some(b) = kids.get(2) {
                    alts.push(self.expr(*b, d));
                }
                Expr::Alt(alts)
            }
            // `await f(x)` is what `f(x)` returns, `x as y` is `x`
            "parenthesized_expression" | "await" | "as_pattern" => {
                match self.kids(n).into_iter().next() {
                    Some(k) => self.expr(k, d),
                    None => Expr::None,
                }
            }
            "binary_operator" => {
                let op = n
                    .field(F_OPERATOR)
                    .map(|o| self.text(o).to_string())
                    .unwrap_or_default();
                let left = self.field_expr(n, F_LEFT, d);
                let right = self.field_expr(n, F_RIGHT, d);
                Expr::BinOp {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                }
            }
            "subscript" => {
                let v = self.field_expr(n, F_VALUE, d);
                let mut c = n.walk();
                let items: Vec<Expr> = n
                    .children_by_field_name("subscript", &mut c)
                    .filter(|x| x.kind() != "comment")
                    .map(|x| self.expr(x, d))
                    .collect();
                Expr::Subscript(Box::new(v), items)
            }
            "lambda" => Expr::Lambda(Box::new(self.field_expr(n, F_BODY, d))),
            "type" | "generic_type" => self.type_expr(n, d),
            _ => Expr::Other(self.short(n, 120)),
        }
    }

    /// The child `f` of `n` converted at `depth`, `Expr::None` when there is none.
    fn field_expr(&self, n: Node<'t>, f: usize, depth: usize) -> Expr {
        n.field(f)
            .map(|x| self.expr(x, depth))
            .unwrap_or(Expr::None)
    }

    /// A call node converted at `depth`; its arguments are remembered for the walker unless a
    /// depth limit cut them short.
    fn call_expr(&self, n: Node<'t>, depth: usize) -> Expr {
        let func = self.field_expr(n, F_FUNCTION, depth);
        let limits_before = self.expr_limits_hit.get();
        let (args, kwargs) = self.call_args(n, depth);
        // Identical to what the walker would compute for this call unless a depth limit
        // cut the conversion short.
        if self.expr_limits_hit.get() == limits_before {
            self.memo
                .borrow_mut()
                .insert(n.id(), (args.clone(), kwargs.clone()));
        }
        Expr::Call {
            func: Box::new(func),
            args,
            kwargs,
        }
    }

    /// A list, set or generator comprehension converted at `depth`: its element, the names its
    /// first `for` binds and what that `for` iterates.
    fn comprehension_expr(&self, n: Node<'t>, depth: usize) -> Expr {
        let body = self.field_expr(n, F_BODY, depth);
        let clause = self
            .kids(n)
            .into_iter()
            .find(|k| kind(k) == "for_in_clause");
        match clause {
            Some(c) => {
                let vars = c
                    .field(F_LEFT)
                    .map(|l| self.target_names(l))
                    .unwrap_or_default();
                let iter = self.field_expr(c, F_RIGHT, depth);
                Expr::Comp {
                    elt: Box::new(body),
                    vars,
                    iter: Box::new(iter),
                }
            }
            None => Expr::Other(self.short(n, 80)),
        }
    }
}

/// The comparisons and plain assignments of a short piece of code (a branch's test, one
/// statement), read from its syntax tree. Operands and values are as written, their whitespace
/// collapsed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shape {
    /// `a > b` as `(a, ">", b)`; a chained comparison (`a < b < c`) as its pairs.
    pub comparisons: Vec<(String, String, String)>,
    /// `target = value` (a plain `=` with one target), as `(target, value)`.
    pub assignments: Vec<(String, String)>,
    /// Every sum (`a + b * 2 + (c / 2)`, the longest chain of `+`, parentheses looked
    /// through): its text and its terms, each with the number it is multiplied by (`x * 2`,
    /// `2 * x`; `x / 2` is `0.5`; a term with no number is `1`).
    pub sums: Vec<(String, Vec<(String, f64)>)>,
}

/// At most this many bytes of code are read by [`shape`] (a test, a statement).
const SHAPE_MAX: usize = 4_000;

/// The [`Shape`] of `code`: empty when it is longer than a statement may be or cannot be
/// parsed.
pub fn shape(code: &str) -> Shape {
    let mut out = Shape::default();
    if code.len() > SHAPE_MAX {
        return out;
    }
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match slot.take() {
            Some(p) => slot.insert(p),
            None => slot.insert(new_parser().ok()?),
        };
        parser.parse(code.as_bytes(), None)
    });
    let Some(tree) = tree else { return out };
    let text = |n: Node<'_>| {
        code.get(n.byte_range())
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut absorbed = std::collections::HashSet::new();
    let mut todo = vec![tree.root_node()];
    while let Some(n) = todo.pop() {
        let mut c = n.walk();
        let kids: Vec<Node<'_>> = n.children(&mut c).collect();
        match kind(n) {
            "binary_operator" if operator(n, code) == "+" && absorbed.insert(n.id()) => {
                let mut terms = Vec::new();
                add_terms(n, code, &mut terms, &mut absorbed);
                let terms = terms
                    .into_iter()
                    .map(|t| {
                        let (t, w) = weighted(t, code);
                        (text(t), w)
                    })
                    .collect();
                out.sums.push((text(n), terms));
            }
            "comparison_operator" => {
                // operands and operators alternate
                let parts: Vec<Node<'_>> = kids
                    .iter()
                    .copied()
                    .filter(|k| kind(*k) != "comment")
                    .collect();
                for w in parts.windows(3).step_by(2) {
                    if w[0].is_named() && !w[1].is_named() && w[2].is_named() {
                        out.comparisons.push((text(w[0]), text(w[1]), text(w[2])));
                    }
                }
            }
            "assignment" => {
                let right = n.field(F_RIGHT);
                if let (Some(l), Some(r)) = (n.field(F_LEFT), right)
                    && kind(r) != "assignment"
                {
                    out.assignments.push((text(l), text(r)));
                }
            }
            _ => {}
        }
        todo.extend(kids.into_iter().rev());
    }
    out
}

/// A binary operator's operator, as written.
fn operator<'a>(n: Node<'_>, code: &'a str) -> &'a str {
    n.field(F_OPERATOR)
        .and_then(|o| code.get(o.byte_range()))
        .unwrap_or("")
}

/// `(x)` read as `x`.
fn unparenthesized(mut n: Node<'_>) -> Node<'_> {
    while kind(n) == "parenthesized_expression" {
        let mut c = n.walk();
        let Some(inner) = n.named_children(&mut c).find(|k| kind(*k) != "comment") else {
            break;
        };
        n = inner;
    }
    n
}

/// The terms of a chain of `+` (parentheses looked through), each inner `+` marked absorbed.
fn add_terms<'t>(
    n: Node<'t>,
    code: &str,
    out: &mut Vec<Node<'t>>,
    absorbed: &mut std::collections::HashSet<usize>,
) {
    let n = unparenthesized(n);
    if kind(n) == "binary_operator" && operator(n, code) == "+" {
        absorbed.insert(n.id());
        for side in [n.field(F_LEFT), n.field(F_RIGHT)].into_iter().flatten() {
            add_terms(side, code, out, absorbed);
        }
    } else {
        out.push(n);
    }
}

/// A term and the number it is multiplied by (`x * 2`, `2 * x`, `x / 4`), else itself and 1.
fn weighted<'t>(n: Node<'t>, code: &str) -> (Node<'t>, f64) {
    let n = unparenthesized(n);
    let number = |x: Node<'_>| {
        let x = unparenthesized(x);
        matches!(kind(x), "integer" | "float")
            .then(|| code.get(x.byte_range())?.parse::<f64>().ok())
            .flatten()
    };
    if kind(n) == "binary_operator"
        && let (Some(l), Some(r)) = (n.field(F_LEFT), n.field(F_RIGHT))
    {
        match (operator(n, code), number(l), number(r)) {
            ("*", None, Some(w)) => return (unparenthesized(l), w),
            ("*", Some(w), None) => return (unparenthesized(r), w),
            ("/", None, Some(d)) if d != 0.0 => return (unparenthesized(l), 1.0 / d),
            _ => {}
        }
    }
    (n, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enclosing_lines_are_the_block_openers_above_innermost_first() {
        let src = "def f(x):\n    if x:\n        # a comment\n\n        y = 1\n    else:\n        for i in x:\n            z = i\n    return y\n";
        let lines: Vec<&str> = src.lines().collect();
        // `z = i` (line 8): the `for`, the `else`, the `def`
        assert_eq!(
            enclosing_lines(&lines, 8, 0).collect::<Vec<_>>(),
            [(6, 8), (5, 4), (0, 0)]
        );
        // `y = 1` (line 5): the comment and the blank line are skipped
        assert_eq!(
            enclosing_lines(&lines, 5, 0).collect::<Vec<_>>(),
            [(1, 4), (0, 0)]
        );
        // no higher than the floor; nothing above the top level; a line past the end
        assert_eq!(
            enclosing_lines(&lines, 8, 1).collect::<Vec<_>>(),
            [(6, 8), (5, 4)]
        );
        assert_eq!(enclosing_lines(&lines, 1, 0).count(), 0);
        assert_eq!(enclosing_lines(&lines, 99, 0).count(), 0);
    }

    fn parse(src: &str) -> ModuleInfo {
        parse_module("src/graph.py", src.to_string()).unwrap()
    }

    #[test]
    fn calls_inside_f_string_interpolations_are_calls() {
        let m = parse(
            "def report(xs):\n    head = f\"at {stamp()}\" f\" {len(xs):{width(xs)}}\"\n    f\"{log(xs)!r}\"\n    return head + f'{{literal}} {tail(xs)}'\n",
        );
        let mut calls: Vec<(&str, Option<usize>, Option<&str>)> = m
            .calls
            .iter()
            .map(|c| (c.method.as_str(), c.func, c.assigned_to.as_deref()))
            .collect();
        calls.sort();
        assert_eq!(
            calls,
            vec![
                ("len", Some(0), None),
                ("log", Some(0), None),
                ("stamp", Some(0), None),
                ("tail", Some(0), None),
                ("width", Some(0), None),
            ]
        );
        // the strings are recorded once, their interpolations as written
        assert_eq!(m.strings.iter().filter(|s| s.fstring).count(), 3);
    }

    #[test]
    fn imports_with_aliases_and_relative_modules() {
        let m = parse_module(
            "src/nodes/judges.py",
            "import operator\nimport os.path\nimport langgraph.graph as lg\nfrom langgraph.graph import StateGraph as SG, START\nfrom ..state import AgentState\nfrom . import tools\n".into(),
        )
        .unwrap();
        assert_eq!(m.imports["operator"], "operator");
        assert_eq!(m.imports["os"], "os");
        assert_eq!(m.imports["lg"], "langgraph.graph");
        assert_eq!(m.imports["SG"], "langgraph.graph.StateGraph");
        assert_eq!(m.imports["START"], "langgraph.graph.START");
        assert_eq!(m.imports["AgentState"], "src.state.AgentState");
        assert_eq!(m.imports["tools"], "src.nodes.tools");
    }

    #[test]
    fn annotated_fields_become_subscripts() {
        let m = parse(
            "class S(TypedDict):\n    evidences: Annotated[Dict[str, List[Evidence]], operator.ior]\n    x: int\n",
        );
        let c = &m.classes[0];
        assert_eq!(c.bases, vec!["TypedDict"]);
        assert_eq!(c.fields.len(), 2);
        match &c.fields[0].annotation {
            Expr::Subscript(head, items) => {
                assert_eq!(head.dotted().as_deref(), Some("Annotated"));
                assert_eq!(items.len(), 2, "{items:?}");
                assert_eq!(items[1].dotted().as_deref(), Some("operator.ior"));
            }
            other => panic!("not a subscript: {other:?}"),
        }
    }

    #[test]
    fn calls_carry_loops_try_and_with_context() {
        let m = parse(
            "def f(url):\n    with tempfile.TemporaryDirectory() as d:\n        for n in NODES:\n            try:\n                subprocess.run(['git', 'clone', url, d], check=True)\n            except subprocess.CalledProcessError:\n                pass\n",
        );
        let c = m
            .calls
            .iter()
            .find(|c| c.callee.as_deref() == Some("subprocess.run"))
            .unwrap();
        assert_eq!(c.line, 5);
        assert!(c.in_try && c.in_loop);
        assert_eq!(c.withs, vec!["tempfile.TemporaryDirectory"]);
        assert_eq!(c.loops[0].vars, vec!["n"]);
        assert_eq!(c.kwargs[0].0, "check");
        assert_eq!(
            m.functions[0].excepts,
            vec!["subprocess.CalledProcessError"]
        );
    }

    #[test]
    fn router_returns_and_appends_are_recorded() {
        let m = parse(
            "def route(state):\n    out = []\n    if state['x']:\n        out.append('a')\n    out += ['b']\n    return out if out else END\n",
        );
        let f = &m.functions[0];
        assert_eq!(f.appends["out"].len(), 2);
        assert!(matches!(f.returns[0], Expr::Alt(_)));
    }

    #[test]
    fn strings_in_comments_are_not_calls() {
        let m = parse("# eval(x)\ns = 'eval(x) here'\nast.literal_eval(s)\n");
        let names: Vec<_> = m.calls.iter().filter_map(|c| c.callee.clone()).collect();
        assert_eq!(names, vec!["ast.literal_eval"]);
    }

    #[test]
    fn every_field_name_is_a_python_grammar_field() {
        for (name, id) in FIELD_NAMES.iter().zip(FIELD_IDS.iter()) {
            assert_ne!(*id, 0, "{name} is not a field of the Python grammar");
        }
    }

    #[test]
    fn nested_call_arguments_are_the_same_as_converted_alone() {
        let m = parse(
            "x = f(g(h(1, k=[2, 3]), 'abc'), y=sorted(z))
def r():
    return a.b(c.d(e))
",
        );
        let by_callee = |name: &str| {
            m.calls
                .iter()
                .find(|c| c.callee.as_deref() == Some(name))
                .unwrap()
        };
        let h = by_callee("h");
        assert_eq!(h.args, vec![Expr::Num("1".into())]);
        assert_eq!(h.kwargs[0].0, "k");
        assert_eq!(h.assigned_to, None);
        let g = by_callee("g");
        assert_eq!(g.args.len(), 2);
        assert!(
            matches!(&g.args[0], Expr::Call { args, kwargs, .. } if args.len() == 1 && kwargs.len() == 1)
        );
        assert_eq!(by_callee("f").assigned_to.as_deref(), Some("x"));
        assert_eq!(by_callee("sorted").args, vec![Expr::Name("z".into())]);
        assert_eq!(
            by_callee("c.d").args,
            vec![Expr::Name("e".into())],
            "{:?}",
            m.calls
        );
        assert_eq!(by_callee("a.b").args.len(), 1);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let src = format!("x = {}1{}\n", "(".repeat(3000), ")".repeat(3000));
        let m = parse(&src);
        assert!(m.truncated || m.syntax_errors || !m.constants.is_empty());
    }
}
