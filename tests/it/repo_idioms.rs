//! One fixture repository per LangGraph / Python idiom the RepoInvestigator must read right,
//! plus security positives and negatives for each kind.

use auditor::repo::python::graph::GraphFacts;
use auditor::repo::{self, RepoFacts, RepoLimits, RepoRequest};
use auditor::testkit::git::{FixtureCommit, build_repo};

fn investigate(files: &[(&str, &str)]) -> RepoFacts {
    let dir = tempfile::tempdir().unwrap();
    let mut c = FixtureCommit::new("add code", 1_700_000_000);
    for (p, s) in files {
        c = c.file(*p, *s);
    }
    build_repo(dir.path(), &[c]).unwrap();
    repo::investigate(&RepoRequest {
        source: dir.path().to_str().unwrap().into(),
        git_ref: None,
        commit: None,
        limits: RepoLimits::default(),
        extract_pdf: None,
    })
    .unwrap()
}

fn graph(src: &str) -> GraphFacts {
    let f = investigate(&[("src/graph.py", src)]);
    f.python.graphs.into_iter().next().expect("a graph")
}

fn edges(g: &GraphFacts) -> Vec<String> {
    g.edges
        .iter()
        .map(|e| {
            format!(
                "{}{}{}",
                e.from,
                if e.conditional { "~>" } else { "->" },
                e.to
            )
        })
        .collect()
}

fn fan_out(g: &GraphFacts) -> Vec<String> {
    g.fan_out
        .iter()
        .map(|x| format!("{}->[{}]", x.from, x.to.join(",")))
        .collect()
}

fn fan_in(g: &GraphFacts) -> Vec<String> {
    g.fan_in
        .iter()
        .map(|x| format!("[{}]->{}", x.from.join(","), x.to))
        .collect()
}

#[test]
fn aliased_imports_and_start_end_spellings() {
    let g = graph(
        "from langgraph.graph import StateGraph as SG, START as BEGIN\nimport langgraph.graph as lg\ng = SG(State)\ng.add_node('a', fa)\ng.add_node('b', fb)\ng.add_edge(BEGIN, 'a')\ng.add_edge('__start__', 'b')\ng.add_edge('a', lg.END)\ng.add_edge('b', '__end__')\n",
    );
    assert_eq!(edges(&g), vec!["START->a", "START->b", "a->END", "b->END"]);
    assert_eq!(fan_out(&g), vec!["START->[a,b]"]);
    assert!(fan_in(&g).is_empty(), "no fan-in: END is not a join");
    assert_eq!(g.branchings[0].join, None);
}

#[test]
fn module_alias_construction() {
    let g = graph(
        "import langgraph.graph as lg\nw = lg.StateGraph(AgentState)\nw.add_node('x', f)\nw.add_edge(lg.START, 'x')\n",
    );
    assert_eq!(g.builder, "w");
    assert_eq!(edges(&g), vec!["START->x"]);
}

#[test]
fn function_references_as_nodes() {
    let g = graph(
        "from langgraph.graph import StateGraph, START\ndef repo_investigator(s):\n    return {}\ndef doc_analyst(s):\n    return {}\nb = StateGraph(S)\nb.add_node(repo_investigator)\nb.add_node(doc_analyst)\nb.add_edge(START, 'repo_investigator')\nb.add_edge('repo_investigator', 'doc_analyst')\n",
    );
    let nodes: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, vec!["repo_investigator", "doc_analyst"]);
    assert!(g.linear);
    assert!(g.undefined_nodes.is_empty());
}

#[test]
fn list_form_join_entry_and_finish_points() {
    let g = graph(
        "from langgraph.graph import StateGraph\nb = StateGraph(S)\nfor n in ['a', 'b', 'j']:\n    b.add_node(n, f)\nb.set_entry_point('a')\nb.add_edge('a', 'b')\nb.add_edge('a', 'x')\nb.add_node('x', f)\nb.add_edge(['b', 'x'], 'j')\nb.set_finish_point('j')\n",
    );
    assert_eq!(
        edges(&g),
        vec!["START->a", "a->b", "a->x", "b->j", "x->j", "j->END"]
    );
    assert_eq!(fan_out(&g), vec!["a->[b,x]"]);
    assert_eq!(fan_in(&g), vec!["[b,x]->j"]);
    assert_eq!(g.branchings[0].join.as_deref(), Some("j"));
}

#[test]
fn add_sequence_with_functions_and_named_tuples() {
    let g = graph(
        "from langgraph.graph import StateGraph, START\ndef step_one(s):\n    pass\ndef step_two(s):\n    pass\nb = StateGraph(S)\nb.add_sequence([step_one, ('named', step_two), step_two])\nb.add_edge(START, 'step_one')\n",
    );
    assert_eq!(
        edges(&g),
        vec!["step_one->named", "named->step_two", "START->step_one"]
    );
    assert!(g.linear);
}

#[test]
fn conditional_edges_with_path_map_dict_and_list() {
    let g = graph(
        "from langgraph.graph import StateGraph, END\ndef route(s):\n    return 'ok' if s['fine'] else 'bad'\nb = StateGraph(S)\nfor n in ['a', 'b', 'err']:\n    b.add_node(n, f)\nb.add_conditional_edges('a', route, {'ok': 'b', 'bad': 'err'})\nb.add_conditional_edges('b', route, ['err', END])\n",
    );
    assert_eq!(edges(&g), vec!["a~>b", "a~>err", "b~>err", "b~>END"]);
    assert!(
        g.fan_out.is_empty(),
        "a router picking one branch is not a fan-out"
    );
    assert!(!g.linear, "conditional branching is not purely linear");
    assert_eq!(g.routers[0].router, "route");
}

#[test]
fn router_returning_a_list_fans_out() {
    let g = graph(
        "from langgraph.graph import StateGraph, START\ndef dispatch(s):\n    if s.get('errors'):\n        return 'fail'\n    return ['repo', 'doc']\nb = StateGraph(S)\nfor n in ['start', 'repo', 'doc', 'fail']:\n    b.add_node(n, f)\nb.add_edge(START, 'start')\nb.add_conditional_edges('start', dispatch)\n",
    );
    assert_eq!(fan_out(&g), vec!["start->[doc,repo]"]);
    assert_eq!(g.fan_out[0].via, "router_list");
    assert!(edges(&g).contains(&"start~>fail".to_string()));
}

#[test]
fn router_building_its_list_with_appends() {
    let g = graph(
        "from langgraph.graph import StateGraph\ndef pick(s):\n    targets = []\n    if s['pdf']:\n        targets.append('doc')\n    targets.append('repo')\n    return targets\nb = StateGraph(S)\nb.add_node('s', f)\nb.add_conditional_edges('s', pick, ['doc', 'repo'])\n",
    );
    assert_eq!(fan_out(&g), vec!["s->[doc,repo]"]);
}

#[test]
fn send_api_over_a_constant() {
    let g = graph(
        "from langgraph.graph import StateGraph\nfrom langgraph.types import Send\nJUDGES = ('prosecutor', 'defense', 'tech_lead')\ndef fan(s):\n    return [Send(j, {'evidence': s['e']}) for j in JUDGES]\nb = StateGraph(S)\nb.add_node('agg', f)\nb.add_conditional_edges('agg', fan, list(JUDGES))\n",
    );
    assert_eq!(fan_out(&g), vec!["agg->[defense,prosecutor,tech_lead]"]);
    assert_eq!(g.fan_out[0].via, "send");
}

#[test]
fn loops_over_constants_imported_from_another_module_and_dict_items() {
    let f = investigate(&[
        ("src/names.py", "DETECTIVES = ['repo', 'doc', 'vision']\n"),
        (
            "src/graph.py",
            "from langgraph.graph import StateGraph, START\nfrom src.names import DETECTIVES as D\nNODES = {'agg': aggregate, 'repo': r, 'doc': d, 'vision': v}\nb = StateGraph(S)\nfor name, fn in NODES.items():\n    b.add_node(name, fn)\nfor d in D:\n    b.add_edge(START, d)\n    b.add_edge(d, 'agg')\n",
        ),
    ]);
    let g = &f.python.graphs[0];
    assert_eq!(g.nodes.len(), 4);
    assert_eq!(fan_out(g), vec!["START->[repo,doc,vision]"]);
    assert_eq!(fan_in(g), vec!["[repo,doc,vision]->agg"]);
    assert!(g.unresolved.is_empty(), "{:?}", g.unresolved);
}

#[test]
fn enum_members_as_node_names() {
    let g = graph(
        "from enum import Enum\nfrom langgraph.graph import StateGraph, START\nclass N(str, Enum):\n    REPO = 'repo'\n    DOC = 'doc'\nb = StateGraph(S)\nb.add_node(N.REPO, f)\nb.add_node(N.DOC.value, f)\nb.add_edge(START, N.REPO)\nb.add_edge(N.REPO.value, N.DOC)\n",
    );
    assert_eq!(edges(&g), vec!["START->repo", "repo->doc"]);
    assert!(g.undefined_nodes.is_empty());
}

#[test]
fn lambda_router_and_conditional_entry_point() {
    let g = graph(
        "from langgraph.graph import StateGraph\nb = StateGraph(S)\nfor n in ['a', 'b', 'c']:\n    b.add_node(n, f)\nb.set_conditional_entry_point(lambda s: 'a' if s['x'] else 'b')\nb.add_conditional_edges('a', lambda s: 'c' if s['y'] else 'b')\n",
    );
    assert_eq!(edges(&g), vec!["START~>a", "START~>b", "a~>c", "a~>b"]);
}

#[test]
fn builder_passed_to_helper_functions_and_bound_to_self() {
    let g = graph(
        "from langgraph.graph import StateGraph, START, END\ndef add_judges(builder):\n    for j in ['p', 'd']:\n        builder.add_node(j, f)\n        builder.add_edge('agg', j)\n        builder.add_edge(j, 'cj')\nclass Auditor:\n    def __init__(self):\n        self.graph = StateGraph(S)\n        self.graph.add_node('agg', f)\n        self.graph.add_node('cj', f)\n        self.graph.add_edge(START, 'agg')\n        add_judges(self.graph)\n        self.graph.add_edge('cj', END)\n",
    );
    assert_eq!(g.builder, "self.graph");
    assert_eq!(fan_out(&g), vec!["agg->[p,d]"]);
    assert_eq!(fan_in(&g), vec!["[p,d]->cj"]);
}

#[test]
fn purely_linear_graph() {
    let f = investigate(&[(
        "src/graph.py",
        "from langgraph.graph import StateGraph, START, END\nb = StateGraph(S)\nfor n in ['repo', 'doc', 'judge']:\n    b.add_node(n, f)\nb.add_edge(START, 'repo')\nb.add_edge('repo', 'doc')\nb.add_edge('doc', 'judge')\nb.add_edge('judge', END)\n",
    )]);
    let g = &f.python.graphs[0];
    assert!(g.linear && g.fan_out.is_empty() && g.fan_in.is_empty());
    let ev = graph_evidence(&f);
    let not_linear = ev.iter().find(|e| e.id == "repo.graph.not_linear").unwrap();
    assert!(!not_linear.found);
    assert!(
        !ev.iter()
            .find(|e| e.id == "repo.graph.detectives_fan_out")
            .unwrap()
            .found
    );
}

#[test]
fn broken_graph_with_edges_to_undefined_nodes() {
    let f = investigate(&[(
        "src/graph.py",
        "from langgraph.graph import StateGraph, START\nb = StateGraph(S)\nb.add_node('a', f)\nb.add_edge(START, 'a')\nb.add_edge('a', 'ghost')\n",
    )]);
    let g = &f.python.graphs[0];
    assert_eq!(g.undefined_nodes.len(), 1);
    assert_eq!(g.undefined_nodes[0].name, "ghost");
    assert_eq!(g.undefined_nodes[0].line, 5);
    let ev = graph_evidence(&f);
    let wf = ev
        .iter()
        .find(|e| e.id == "repo.graph.well_formed")
        .unwrap();
    assert!(!wf.found && wf.location == "src/graph.py:5", "{wf:?}");
}

#[test]
fn no_graph_at_all_and_other_graph_libraries_ignored() {
    let f = investigate(&[(
        "src/viz.py",
        "import networkx as nx\nG = nx.DiGraph()\nG.add_node('a')\nG.add_edge('a', 'b')\n",
    )]);
    assert!(f.python.graphs.is_empty(), "{:?}", f.python.graphs);
    let ev = graph_evidence(&f);
    assert_eq!(ev.len(), 1);
    assert!(!ev[0].found);
}

fn graph_evidence(f: &RepoFacts) -> Vec<auditor::model::Evidence> {
    let text = std::fs::read_to_string("tests/fixtures/rubrics/official-v3.0.0.json").unwrap();
    let r = auditor::rubric::Rubric::parse(&text, "v3").unwrap();
    let d = r.dimension("graph_orchestration").unwrap().clone();
    repo::evidence(f, &[d])
        .remove("graph_orchestration")
        .unwrap()
}

#[test]
fn state_reducers_named_functions_and_inherited_models() {
    let f = investigate(&[(
        "src/state.py",
        "import pydantic\nimport operator\nfrom typing import Annotated\nfrom typing_extensions import TypedDict\nfrom langgraph.graph import MessagesState\nfrom langgraph.graph.message import add_messages\ndef merge_evidence(a, b):\n    return {**a, **b}\nclass Base(pydantic.BaseModel):\n    pass\nclass Evidence(Base):\n    found: bool\nclass Chat(MessagesState):\n    extra: Annotated[list, add_messages]\nclass AgentState(TypedDict, total=False):\n    evidences: Annotated[dict, merge_evidence]\n    opinions: Annotated[list, operator.add]\n    plain: list\n",
    )]);
    let s = &f.python.state;
    let td: Vec<&str> = s.typed_dicts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(td, vec!["Chat", "AgentState"]);
    let pm: Vec<&str> = s.pydantic_models.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(pm, vec!["Base", "Evidence"]);
    let r: Vec<String> = s
        .reducers
        .iter()
        .map(|r| format!("{}.{}={}", r.class, r.field, r.reducer))
        .collect();
    assert_eq!(
        r,
        vec![
            "Chat.messages=add_messages",
            "Chat.extra=add_messages",
            "AgentState.evidences=merge_evidence",
            "AgentState.opinions=operator.add"
        ]
    );
}

const POSITIVES: &str = "import os\nimport subprocess\nfrom subprocess import check_output\n\ndef run(url, code):\n    os.system('git clone ' + url)\n    os.popen(f'ls {url}')\n    subprocess.run(f'git clone {url}', shell=True)\n    check_output('ls', shell=True)\n    subprocess.getoutput('ls')\n    eval(code)\n    exec(code)\n";

const NEGATIVES: &str = "import ast\nimport subprocess\n\n# os.system('git clone x') is forbidden here\nDOC = 'never call eval(x) or os.system(y) or exec(z)'\n\ndef run(url, model, df):\n    subprocess.run(['git', 'clone', url], check=True, capture_output=True)\n    subprocess.run('ls', shell=False)\n    ast.literal_eval('[1, 2]')\n    model.eval()\n    df.eval('a + b')\n    system = lambda x: x\n    system('ls')\n\ndef eval_score(x):\n    return x\n";

#[test]
fn security_positives_for_each_kind_with_exact_lines() {
    let f = investigate(&[("src/tools/bad.py", POSITIVES)]);
    let got: Vec<(String, usize)> = f
        .python
        .security
        .findings
        .iter()
        .map(|x| (x.kind.clone(), x.line))
        .collect();
    let want: Vec<(String, usize)> = [
        ("os_system", 6),
        ("string_built_shell_command", 6),
        ("os_popen", 7),
        ("string_built_shell_command", 7),
        ("subprocess_shell", 8),
        ("string_built_shell_command", 8),
        ("subprocess_shell", 9),
        ("subprocess_shell", 10),
        ("eval", 11),
        ("exec", 12),
    ]
    .iter()
    .map(|(k, l)| (k.to_string(), *l))
    .collect();
    assert_eq!(got, want);
    assert!(!f.python.security.sandboxed_clone);
    let text = std::fs::read_to_string("tests/fixtures/rubrics/official-v3.0.0.json").unwrap();
    let r = auditor::rubric::Rubric::parse(&text, "v3").unwrap();
    let d = r.dimension("safe_tool_engineering").unwrap().clone();
    let ev = repo::evidence(&f, &[d])
        .remove("safe_tool_engineering")
        .unwrap();
    let findings = ev
        .iter()
        .filter(|e| e.kind == auditor::model::EvidenceKind::SecurityFinding && e.found)
        .count();
    assert_eq!(findings, 10);
    assert!(ev.iter().any(|e| e.location == "src/tools/bad.py:6"));
}

#[test]
fn security_negatives_produce_no_findings() {
    let f = investigate(&[("src/tools/good.py", NEGATIVES)]);
    assert!(
        f.python.security.findings.is_empty(),
        "{:?}",
        f.python.security.findings
    );
    assert_eq!(f.python.security.clone_calls.len(), 1);
    assert!(
        !f.python.security.sandboxed_clone,
        "clone outside a temp dir"
    );
}

#[test]
fn structured_output_and_retry_idioms() {
    let f = investigate(&[(
        "src/nodes/judges.py",
        "from tenacity import retry, stop_after_attempt\n\n@retry(stop=stop_after_attempt(3))\ndef ask(llm, msgs):\n    return llm.with_structured_output(JudicialOpinion).invoke(msgs)\n\ndef ask_tools(llm, msgs):\n    return llm.bind_tools([JudicialOpinion]).with_retry(stop_after_attempt=2).invoke(msgs)\n",
    )]);
    let calls: Vec<(String, String, bool)> = f
        .python
        .structured_output
        .calls
        .iter()
        .map(|c| (c.method.clone(), c.schema.clone(), c.retry))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "with_structured_output".into(),
                "JudicialOpinion".into(),
                true
            ),
            ("bind_tools".into(), "JudicialOpinion".into(), true)
        ]
    );
}

#[test]
fn persona_prompts_in_prompt_files() {
    let long = |who: &str, body: &str| {
        format!(
            "You are the {who}. {body} {}",
            "Cite evidence ids for every claim you make. ".repeat(2)
        )
    };
    let p = long(
        "Prosecutor",
        "Hunt for security flaws, gaps and lazy shortcuts; be adversarial.",
    );
    let d = long(
        "Defense",
        "Reward effort and intent; value creative workarounds generously.",
    );
    let t = long(
        "Tech Lead",
        "Weigh maintainability, architecture and practical viability.",
    );
    let f = investigate(&[
        ("prompts/prosecutor.txt", &p),
        ("prompts/defense.md", &d),
        ("prompts/tech_lead.txt", &t),
        ("src/nodes/judges.py", "import pathlib\n"),
    ]);
    let personas: Vec<&str> = f
        .python
        .personas
        .prompts
        .iter()
        .map(|x| x.persona.as_str())
        .collect();
    assert_eq!(personas, vec!["Prosecutor", "Defense", "TechLead"]);
    assert!(f.python.personas.similarity.iter().all(|s| s.share < 0.9));
}

// Idioms met in published LangGraph packages (open_deep_research, langgraph-codeact,
// langgraph-prebuilt, langgraph-swarm).

#[test]
fn command_routing_from_return_annotations_goto_and_destinations() {
    let g = graph(
        "from typing import Literal\nfrom langgraph.graph import StateGraph, START, END\nfrom langgraph.types import Command, Send\ndef clarify(state) -> Command[Literal['brief', '__end__']]:\n    if state['x']:\n        return Command(goto=END)\n    return Command(goto='brief')\ndef brief(state):\n    return Command(goto=[Send('research', {'s': s}) for s in state['sections']])\ndef research(state):\n    return {}\ndef write(state) -> Command[Literal[END, 'research']]:\n    return Command(goto='research')\ndef call_model(state):\n    return Command(goto='sandbox')\ndef sandbox(state):\n    return {}\nb = StateGraph(S)\nb.add_node('clarify', clarify)\nb.add_node('brief', brief)\nb.add_node('research', research)\nb.add_node('write', write)\nb.add_node(call_model, destinations=(END, 'sandbox'))\nb.add_node(sandbox)\nb.add_edge(START, 'clarify')\nb.add_edge('research', 'write')\nb.add_edge('sandbox', 'call_model')\n",
    );
    let e = edges(&g);
    for want in [
        "clarify~>brief",
        "clarify~>END",
        "brief~>research",
        "write~>END",
        "write~>research",
        "call_model~>END",
        "call_model~>sandbox",
    ] {
        assert!(e.contains(&want.to_string()), "{want} missing in {e:?}");
    }
    assert!(!g.linear);
    assert!(g.undefined_nodes.is_empty(), "{:?}", g.undefined_nodes);
}

#[test]
fn command_goto_with_sends_to_several_nodes_is_a_fan_out() {
    let g = graph(
        "from typing import Literal\nfrom langgraph.graph import StateGraph, START, END\nfrom langgraph.types import Command, Send\ndef plan(state) -> Command[Literal['a', 'b']]:\n    return Command(goto=[Send('a', state), Send('b', state)])\nb = StateGraph(S)\nb.add_node('plan', plan)\nb.add_node('a', f)\nb.add_node('b', f)\nb.add_node('join', f)\nb.add_edge(START, 'plan')\nb.add_edge(['a', 'b'], 'join')\n",
    );
    assert_eq!(fan_out(&g), vec!["plan->[a,b]"]);
    assert_eq!(fan_in(&g), vec!["[a,b]->join"]);
}

#[test]
fn a_builder_variable_reassigned_to_a_new_state_graph_is_a_second_graph() {
    let f = investigate(&[(
        "src/agent.py",
        "from langgraph.graph import StateGraph, START, END\ndef make(simple):\n    if simple:\n        workflow = StateGraph(S)\n        workflow.add_node('agent', f)\n        workflow.add_node('extra', f)\n        workflow.add_edge('agent', 'extra')\n        workflow.set_entry_point('agent')\n        return workflow.compile()\n    workflow = StateGraph(S)\n    workflow.add_node('agent', f)\n    workflow.add_node('tools', f)\n    workflow.set_entry_point('agent')\n    workflow.add_conditional_edges('agent', route, ['tools', END])\n    workflow.add_edge('tools', 'agent')\n    return workflow.compile()\n",
    )]);
    let gs = &f.python.graphs;
    assert_eq!(gs.len(), 2, "{gs:?}");
    let big = gs.iter().find(|g| g.line == 10).expect("the second graph");
    assert_eq!(
        edges(big),
        vec!["START->agent", "agent~>tools", "agent~>END", "tools->agent"]
    );
    let small = gs.iter().find(|g| g.line == 4).expect("the first graph");
    assert_eq!(edges(small), vec!["agent->extra", "START->agent"]);
}

#[test]
fn an_endpoint_chosen_at_build_time_is_not_a_parallel_fan_out() {
    let g = graph(
        "from langgraph.graph import StateGraph, START, END\ndef make(hook):\n    workflow = StateGraph(S)\n    workflow.add_node('agent', f)\n    workflow.add_node('tools', f)\n    if hook is not None:\n        workflow.add_node('pre', hook)\n        workflow.add_edge('pre', 'agent')\n        entrypoint = 'pre'\n    else:\n        entrypoint = 'agent'\n    workflow.set_entry_point(entrypoint)\n    paths = [entrypoint, END]\n    workflow.add_conditional_edges('tools', route, path_map=paths)\n    workflow.add_edge('agent', 'tools')\n    return workflow\n",
    );
    assert!(
        fan_out(&g).is_empty(),
        "START leads to `pre` or to `agent`, never both: {:?}",
        g.fan_out
    );
    let e = edges(&g);
    assert!(e.contains(&"tools~>pre".to_string()), "{e:?}");
    assert!(e.contains(&"tools~>agent".to_string()), "{e:?}");
    assert!(g.unresolved.is_empty(), "{:?}", g.unresolved);
}

#[test]
fn a_graph_whose_wiring_is_not_statically_known_is_not_called_linear() {
    let g = graph(
        "from langgraph.graph import StateGraph, START\ndef make(agents):\n    builder = StateGraph(S)\n    for agent in agents:\n        builder.add_node(agent.name, agent)\n        builder.add_edge(START, agent.name)\n    return builder\n",
    );
    // one symbolic node per agent, each started from START: a fan-out, not a linear graph
    assert!(g.unresolved.is_empty(), "{:?}", g.unresolved);
    assert_eq!(fan_out(&g), vec!["START->[agent.name (each of agents)]"]);
    assert!(!g.linear);
}

#[test]
fn a_with_retry_on_one_call_does_not_mark_the_other_calls_of_the_module() {
    // open_deep_research tests/evaluators.py: one evaluator retries, five do not
    let f = investigate(&[(
        "src/evaluators.py",
        "def grounded(m, msgs):\n    return m.with_structured_output(Grounded).with_retry(stop_after_attempt=3).invoke(msgs)\n\ndef relevance(m, msgs):\n    return m.with_structured_output(Relevance).invoke(msgs)\n\ndef later(m, msgs):\n    s = m.with_structured_output(Late)\n    r = s.with_retry(stop_after_attempt=2)\n    return r.invoke(msgs)\n",
    )]);
    let calls: Vec<(String, bool)> = f
        .python
        .structured_output
        .calls
        .iter()
        .map(|c| (c.schema.clone(), c.retry))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("Grounded".into(), true),
            ("Relevance".into(), false),
            ("Late".into(), true)
        ]
    );
}

#[test]
fn a_dataclass_is_not_pydantic_because_another_module_has_a_model_of_that_name() {
    let f = investigate(&[
        (
            "src/legacy/configuration.py",
            "from dataclasses import dataclass\n\n@dataclass\nclass Configuration:\n    model: str = \"gpt\"\n",
        ),
        (
            "src/configuration.py",
            "from pydantic import BaseModel\n\nclass Configuration(BaseModel):\n    model: str = \"gpt\"\n\nclass Extended(Configuration):\n    depth: int = 2\n",
        ),
    ]);
    let models: Vec<String> = f
        .python
        .state
        .pydantic_models
        .iter()
        .map(|c| format!("{}:{}", c.path, c.name))
        .collect();
    assert_eq!(
        models,
        vec![
            "src/configuration.py:Configuration",
            "src/configuration.py:Extended"
        ]
    );
}

#[test]
fn messages_state_subclasses_inherit_the_add_messages_reducer() {
    let f = investigate(&[(
        "src/state.py",
        "from langgraph.graph import MessagesState\n\nclass AgentState(MessagesState):\n    remaining_steps: int\n\nclass Deeper(AgentState):\n    notes: str\n\nclass Own(MessagesState):\n    messages: list\n",
    )]);
    let reducers: Vec<String> = f
        .python
        .state
        .reducers
        .iter()
        .map(|r| format!("{}.{}={}@{}", r.class, r.field, r.reducer, r.line))
        .collect();
    // `Own` redeclares `messages` without a reducer: nothing inherited to report.
    assert_eq!(
        reducers,
        vec![
            "AgentState.messages=add_messages@3",
            "Deeper.messages=add_messages@6"
        ]
    );
}

fn nuance_evidence(f: &RepoFacts) -> Vec<auditor::model::Evidence> {
    let text = std::fs::read_to_string("tests/fixtures/rubrics/official-v3.0.0.json").unwrap();
    let r = auditor::rubric::Rubric::parse(&text, "v3").unwrap();
    let d = r.dimension("judicial_nuance").unwrap().clone();
    repo::evidence(f, &[d]).remove("judicial_nuance").unwrap()
}

fn persona_module(shared: &str) -> String {
    format!(
        "PROSECUTOR_PROMPT = \"Prosecutor: trust nothing, hunt for gaps, security flaws, laziness and missing tests; charge every shortcut. {shared}\"\n\
         DEFENSE_PROMPT = \"Defense: reward effort, intent, creative workarounds and the spirit of the work; explain what was attempted. {shared}\"\n\
         TECH_LEAD_PROMPT = \"Tech Lead: weigh architecture, maintainability, modular design, technical debt and practical viability. {shared}\"\n"
    )
}

#[test]
fn the_persona_collusion_figure_is_evidence_the_judges_see() {
    let shared = "Read the evidence for the criterion, cite the evidence ids you rely on, give a \
                  score from one to five with a short argument grounded in the code, and answer \
                  with the JSON schema of a judicial opinion only, nothing else at all.";
    let f = investigate(&[("src/nodes/judges.py", &persona_module(shared))]);
    let ev = nuance_evidence(&f);
    let c = &ev[0];
    assert_eq!(c.id, "repo.personas.collusion");
    assert!(!c.found);
    assert!(
        c.rationale.starts_with("Persona Collusion: the ")
            && c.rationale.contains("% of their text"),
        "{}",
        c.rationale
    );
    let top = f
        .python
        .personas
        .similarity
        .iter()
        .map(|s| s.share)
        .fold(0.0, f64::max);
    assert!(
        c.rationale.contains(&format!("{:.0}%", top * 100.0)),
        "{}",
        c.rationale
    );

    // Short shared instructions: distinct personas, the figure still stated.
    let f = investigate(&[("src/nodes/judges.py", &persona_module("Answer in JSON."))]);
    let ev = nuance_evidence(&f);
    assert_eq!(ev[0].id, "repo.personas.collusion");
    assert!(ev[0].found, "{}", ev[0].rationale);
    assert!(
        ev[0].rationale.starts_with("Distinct personas: "),
        "{}",
        ev[0].rationale
    );

    // No prompts: nothing to compare, no collusion verdict either way.
    let f = investigate(&[("src/nodes/judges.py", "X = 1\n")]);
    assert!(
        !nuance_evidence(&f)
            .iter()
            .any(|e| e.id == "repo.personas.collusion")
    );
}

/// A node after the judges that reads their opinions and asks a model for a verdict holding
/// them is their Chief Justice, not one more judge: its branches are the ones searched.
#[test]
fn a_node_reading_the_judges_opinions_is_their_chief_justice_whatever_model_it_asks() {
    let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass Evidence(BaseModel):\n    goal: str\n    found: bool\n\nclass JudicialOpinion(BaseModel):\n    judge: str\n    criterion_id: str\n    score: int\n    argument: str\n\nclass Verdict(BaseModel):\n    scores: dict\n    opinions: List[JudicialOpinion]\n\nclass S(TypedDict):\n    evidences: Annotated[List[Evidence], operator.add]\n    opinions: Annotated[List[JudicialOpinion], operator.add]\n    verdict: dict\n";
    let graph = "from langgraph.graph import StateGraph, START, END\nfrom langchain_openai import ChatOpenAI\nfrom src.state import S, Evidence, JudicialOpinion, Verdict\n\nllm = ChatOpenAI()\n\ndef look(state):\n    return {\"evidences\": [Evidence(goal=\"g\", found=True)]}\n\ndef weigh(state):\n    op = llm.with_structured_output(JudicialOpinion).invoke(str(state[\"evidences\"]))\n    return {\"opinions\": [op]}\n\ndef settle(state):\n    ops = state[\"opinions\"]\n    v = llm.with_structured_output(Verdict).invoke(str(ops))\n    scores = v.scores\n    for op in ops:\n        if op.judge == \"Prosecutor\" and \"shell=True\" in op.argument:\n            scores[op.criterion_id] = min(scores.get(op.criterion_id, 5), 3)\n    return {\"verdict\": scores}\n\ng = StateGraph(S)\ng.add_node(\"look\", look)\ng.add_node(\"weigh\", weigh)\ng.add_node(\"settle\", settle)\ng.add_edge(START, \"look\")\ng.add_edge(\"look\", \"weigh\")\ng.add_edge(\"weigh\", \"settle\")\ng.add_edge(\"settle\", END)\napp = g.compile()\n";
    let f = investigate(&[("src/state.py", state), ("src/graph.py", graph)]);
    let g = &f.python.graphs[0];
    assert_eq!(
        g.roles.get("weigh"),
        Some(&auditor::repo::python::graph::Role::Judge)
    );
    assert_eq!(g.roles.get("settle"), None, "{:?}", g.roles);
    let j = &f.python.justice;
    assert_eq!(j.location.as_deref(), Some("src/graph.py:14"), "{j:?}");
    let security = j
        .rules
        .iter()
        .find(|r| r.rule == "security_override")
        .unwrap();
    assert!(security.found, "{security:?}");
    assert_eq!(security.location, "src/graph.py:19");
}

/// Judges added as instances of classes whose `__call__` asks for opinions (one inherited from
/// a base class, one held in a module constant) are judges: the router that returns the three
/// of them is their fan-out, and the Chief Justice instance reading their opinions is theirs.
#[test]
fn instances_run_through_their_call_method_have_the_role_of_what_it_does() {
    let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass Evidence(BaseModel):\n    goal: str\n    found: bool\n\nclass JudicialOpinion(BaseModel):\n    judge: str\n    score: int\n    argument: str\n\nclass S(TypedDict):\n    evidences: Annotated[List[Evidence], operator.add]\n    opinions: Annotated[List[JudicialOpinion], operator.add]\n    final: dict\n";
    let nodes = "from langchain_openai import ChatOpenAI\nfrom src.state import Evidence, JudicialOpinion\n\nclass Base:\n    def __init__(self, who):\n        self.who = who\n        self.llm = ChatOpenAI().with_structured_output(JudicialOpinion)\n\n    def __call__(self, state):\n        op = self.llm.invoke(self.who + str(state[\"evidences\"]))\n        return {\"opinions\": [op]}\n\nclass A(Base):\n    def __init__(self):\n        super().__init__(\"a\")\n\nclass B(Base):\n    def __init__(self):\n        super().__init__(\"b\")\n\nclass C:\n    def __call__(self, state):\n        llm = ChatOpenAI().with_structured_output(JudicialOpinion)\n        return {\"opinions\": [llm.invoke(str(state[\"evidences\"]))]}\n\nclass Look:\n    def __call__(self, state):\n        return {\"evidences\": [Evidence(goal=\"g\", found=True)]}\n\nclass Bench:\n    def __call__(self, state):\n        ops = state[\"opinions\"]\n        return {\"final\": {\"score\": sum(o.score for o in ops) / len(ops)}}\n\nTHIRD = C()\n";
    let graph = "from langgraph.graph import StateGraph, START, END\nfrom src.state import S\nfrom src.nodes import A, B, THIRD, Look, Bench\n\ndef route(state):\n    if state[\"evidences\"]:\n        return [\"a\", \"b\", \"c\"]\n    return [END]\n\ng = StateGraph(S)\ng.add_node(\"look\", Look())\ng.add_node(\"a\", A())\ng.add_node(\"b\", B())\ng.add_node(\"c\", THIRD)\ng.add_node(\"bench\", Bench())\ng.add_edge(START, \"look\")\ng.add_conditional_edges(\"look\", route)\ng.add_edge(\"a\", \"bench\")\ng.add_edge(\"b\", \"bench\")\ng.add_edge(\"c\", \"bench\")\ng.add_edge(\"bench\", END)\napp = g.compile()\n";
    let f = investigate(&[
        ("src/state.py", state),
        ("src/nodes.py", nodes),
        ("src/graph.py", graph),
    ]);
    let g = &f.python.graphs[0];
    use auditor::repo::python::graph::Role;
    for judge in ["a", "b", "c"] {
        assert_eq!(
            g.roles.get(judge),
            Some(&Role::Judge),
            "{judge}: {:?}",
            g.roles
        );
    }
    assert_eq!(g.roles.get("look"), Some(&Role::Detective), "{:?}", g.roles);
    assert_eq!(g.roles.get("bench"), None, "{:?}", g.roles);
    assert_eq!(
        f.python.justice.location.as_deref(),
        Some("src/nodes.py:31"),
        "{:?}",
        f.python.justice
    );
    let ev = nuance_evidence(&f);
    let parallel = ev
        .iter()
        .find(|e| e.id.ends_with("parallel_judges"))
        .expect("the judges' fan-out fact");
    assert!(parallel.found, "{}", parallel.rationale);
}

/// A layer is what its fan-out runs in parallel: a node asking for one more opinion that the
/// Chief Justice's router sends to (and back) is no judge, an error branch taken instead of
/// the judges that files a placeholder finding is no detective; neither is reported as left
/// out of its layer's fan-out. A judge run after the others, before the Chief Justice, is.
#[test]
fn a_layer_is_what_its_fan_out_runs_and_nodes_placed_elsewhere_are_not_its_members() {
    let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass Evidence(BaseModel):\n    goal: str\n    found: bool\n\nclass JudicialOpinion(BaseModel):\n    judge: str\n    score: int\n    argument: str\n\nclass S(TypedDict):\n    evidences: Annotated[List[Evidence], operator.add]\n    opinions: Annotated[List[JudicialOpinion], operator.add]\n    bad: bool\n    again: bool\n    final: dict\n";
    let graph = "from langgraph.graph import StateGraph, START, END\nfrom langchain_openai import ChatOpenAI\nfrom src.state import S, Evidence, JudicialOpinion\n\nllm = ChatOpenAI()\n\ndef d1(state):\n    return {\"evidences\": [Evidence(goal=\"a\", found=True)]}\n\ndef d2(state):\n    return {\"evidences\": [Evidence(goal=\"b\", found=True)]}\n\ndef gather(state):\n    return {\"bad\": not state[\"evidences\"]}\n\ndef oops(state):\n    return {\"evidences\": [Evidence(goal=\"error\", found=False)]}\n\ndef hub(state):\n    return {}\n\ndef j1(state):\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(str(state[\"evidences\"]))]}\n\ndef j2(state):\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(str(state[\"evidences\"]))]}\n\ndef j3(state):\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(str(state[\"evidences\"]))]}\n\ndef bench(state):\n    ops = state[\"opinions\"]\n    return {\"final\": {\"score\": sum(o.score for o in ops) / len(ops)}}\n\ndef redo(state):\n    ops = state[\"opinions\"]\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(str(ops))], \"again\": True}\n\ndef after_gather(state):\n    if state[\"bad\"]:\n        return \"oops\"\n    return \"hub\"\n\ndef after_bench(state):\n    s = [o.score for o in state[\"opinions\"]]\n    if max(s) - min(s) > 2 and not state.get(\"again\"):\n        return \"redo\"\n    return END\n\ng = StateGraph(S)\ng.add_node(\"d1\", d1)\ng.add_node(\"d2\", d2)\ng.add_node(\"gather\", gather)\ng.add_node(\"oops\", oops)\ng.add_node(\"hub\", hub)\ng.add_node(\"j1\", j1)\ng.add_node(\"j2\", j2)\ng.add_node(\"j3\", j3)\ng.add_node(\"bench\", bench)\ng.add_node(\"redo\", redo)\ng.add_edge(START, \"d1\")\ng.add_edge(START, \"d2\")\ng.add_edge(\"d1\", \"gather\")\ng.add_edge(\"d2\", \"gather\")\ng.add_conditional_edges(\"gather\", after_gather, {\"oops\": \"oops\", \"hub\": \"hub\"})\ng.add_edge(\"hub\", \"j1\")\ng.add_edge(\"hub\", \"j2\")\ng.add_edge(\"hub\", \"j3\")\ng.add_edge(\"j1\", \"bench\")\ng.add_edge(\"j2\", \"bench\")\ng.add_edge(\"j3\", \"bench\")\ng.add_edge(\"oops\", \"bench\")\ng.add_edge(\"redo\", \"bench\")\ng.add_conditional_edges(\"bench\", after_bench, {\"redo\": \"redo\", END: END})\napp = g.compile()\n";
    use auditor::repo::python::graph::Role;
    let f = investigate(&[("src/state.py", state), ("src/graph.py", graph)]);
    let g = &f.python.graphs[0];
    for judge in ["j1", "j2", "j3"] {
        assert_eq!(g.roles.get(judge), Some(&Role::Judge), "{:?}", g.roles);
    }
    assert_eq!(g.roles.get("redo"), None, "{:?}", g.roles);
    assert_eq!(g.roles.get("oops"), None, "{:?}", g.roles);
    let ev = graph_evidence(&f);
    assert!(
        !ev.iter().any(|e| e.id.ends_with("_partial")),
        "{:?}",
        ev.iter().map(|e| &e.rationale).collect::<Vec<_>>()
    );
    // the structured calls of the judges are the three the judge nodes make, not the one
    // more opinion asked for after the Chief Justice
    let text = std::fs::read_to_string("tests/fixtures/rubrics/official-v3.0.0.json").unwrap();
    let r = auditor::rubric::Rubric::parse(&text, "v3").unwrap();
    let d = r
        .dimension("structured_output_enforcement")
        .unwrap()
        .clone();
    let ev = repo::evidence(&f, &[d])
        .remove("structured_output_enforcement")
        .unwrap();
    let retry = ev
        .iter()
        .find(|e| e.id.ends_with(".retry"))
        .expect("the retry fact");
    assert!(
        retry
            .rationale
            .starts_with("none of the 3 structured calls"),
        "{}",
        retry.rationale
    );
    // a third judge run after the other two, before the Chief Justice: a partial fan-out
    let late = graph
        .replace("g.add_edge(\"hub\", \"j3\")", "g.add_edge(\"j1\", \"j3\")")
        .replace("g.add_edge(\"j1\", \"bench\")\n", "");
    let f = investigate(&[("src/state.py", state), ("src/graph.py", &late)]);
    assert_eq!(
        f.python.graphs[0].roles.get("j3"),
        Some(&Role::Judge),
        "{:?}",
        f.python.graphs[0].roles
    );
    let ev = graph_evidence(&f);
    let partial = ev
        .iter()
        .find(|e| e.id == "repo.graph.judges_partial")
        .expect("a partial judges fan-out");
    assert!(
        partial.rationale.contains("j3 runs in another superstep"),
        "{}",
        partial.rationale
    );
    // a node that writes opinions on a route taken instead of the judges (a skip route) runs
    // neither before nor after them: no member left out of their fan-out
    let skip = graph
        .replace(
            "def after_gather(state):\n    if state[\"bad\"]:\n        return \"oops\"\n",
            "def skip(state):\n    return {\"opinions\": []}\n\ndef after_gather(state):\n    if state[\"bad\"]:\n        return \"oops\"\n    if not state[\"evidences\"]:\n        return \"skip\"\n",
        )
        .replace(
            "{\"oops\": \"oops\", \"hub\": \"hub\"})",
            "{\"oops\": \"oops\", \"hub\": \"hub\", \"skip\": \"skip\"})\ng.add_node(\"skip\", skip)\ng.add_edge(\"skip\", \"bench\")",
        );
    assert_ne!(skip, graph);
    let f = investigate(&[("src/state.py", state), ("src/graph.py", &skip)]);
    assert_eq!(
        f.python.graphs[0].roles.get("skip"),
        Some(&Role::Judge),
        "{:?}",
        f.python.graphs[0].roles
    );
    let ev = graph_evidence(&f);
    assert!(
        !ev.iter().any(|e| e.id.ends_with("_partial")),
        "{:?}",
        ev.iter().map(|e| &e.rationale).collect::<Vec<_>>()
    );
}

/// A re-evaluation when the judges disagree is the Chief Justice stage's, wherever the graph
/// puts it: in the router that leaves the verdict node (`if max(s) - min(s) > 2: return
/// "redo"`), or in a check node whose spread branch raises a flag that the router tests to
/// send the run to another node.
#[test]
fn a_spread_that_routes_the_run_elsewhere_is_the_variance_re_evaluation() {
    let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass JudicialOpinion(BaseModel):\n    judge: str\n    score: int\n    argument: str\n\nclass S(TypedDict):\n    opinions: Annotated[List[JudicialOpinion], operator.add]\n    split: bool\n    again: bool\n    final: dict\n";
    let head = "from langgraph.graph import StateGraph, START, END\nfrom langchain_openai import ChatOpenAI\nfrom src.state import S, JudicialOpinion\n\nllm = ChatOpenAI()\n\ndef j1(state):\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(\"a\")]}\n\ndef j2(state):\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(\"b\")]}\n\ndef bench(state):\n    ops = state[\"opinions\"]\n    return {\"final\": {\"score\": sum(o.score for o in ops) / len(ops)}}\n\ndef redo(state):\n    ops = state[\"opinions\"]\n    return {\"opinions\": [llm.with_structured_output(JudicialOpinion).invoke(str(ops))], \"again\": True}\n\n";
    // the router after the verdict node tests the spread itself
    let routed = format!(
        "{head}def after_bench(state):\n    s = [o.score for o in state[\"opinions\"]]\n    if max(s) - min(s) > 2 and not state.get(\"again\"):\n        return \"redo\"\n    return END\n\ng = StateGraph(S)\ng.add_node(\"j1\", j1)\ng.add_node(\"j2\", j2)\ng.add_node(\"bench\", bench)\ng.add_node(\"redo\", redo)\ng.add_edge(START, \"j1\")\ng.add_edge(START, \"j2\")\ng.add_edge(\"j1\", \"bench\")\ng.add_edge(\"j2\", \"bench\")\ng.add_edge(\"redo\", \"bench\")\ng.add_conditional_edges(\"bench\", after_bench, {{\"redo\": \"redo\", END: END}})\napp = g.compile()\n"
    );
    let f = investigate(&[("src/state.py", state), ("src/graph.py", &routed)]);
    let rule = |f: &auditor::repo::RepoFacts| {
        f.python
            .justice
            .rules
            .iter()
            .find(|r| r.rule == "variance_re_evaluation")
            .cloned()
            .unwrap()
    };
    let r = rule(&f);
    assert!(r.found, "{r:?}");
    assert!(r.how.contains("return \"redo\""), "{r:?}");
    // a check node raises a flag on the spread; the router reads the flag
    let flagged = format!(
        "{head}def check(state):\n    s = [o.score for o in state[\"opinions\"]]\n    hi = max(s)\n    lo = min(s)\n    split = False\n    if (hi - lo) > (5 * 0.2):\n        split = True\n    return {{\"split\": split}}\n\ndef after_check(state):\n    if state.get(\"split\") and not state.get(\"again\"):\n        return \"redo\"\n    return \"bench\"\n\ng = StateGraph(S)\ng.add_node(\"j1\", j1)\ng.add_node(\"j2\", j2)\ng.add_node(\"check\", check)\ng.add_node(\"bench\", bench)\ng.add_node(\"redo\", redo)\ng.add_edge(START, \"j1\")\ng.add_edge(START, \"j2\")\ng.add_edge(\"j1\", \"check\")\ng.add_edge(\"j2\", \"check\")\ng.add_conditional_edges(\"check\", after_check, {{\"redo\": \"redo\", \"bench\": \"bench\"}})\ng.add_edge(\"redo\", \"bench\")\ng.add_edge(\"bench\", END)\napp = g.compile()\n"
    );
    let f = investigate(&[("src/state.py", state), ("src/graph.py", &flagged)]);
    let r = rule(&f);
    assert!(r.found, "{r:?}");
    assert_eq!(r.location, "src/graph.py:26", "{r:?}");
    assert!(
        r.how
            .starts_with("`if (hi - lo) > (5 * 0.2)`: `split = True`")
            && r.how.contains("`after_check`"),
        "{r:?}"
    );
    // the same flag that no router reads routes nothing
    let unread = flagged.replace("state.get(\"split\") and ", "");
    let f = investigate(&[("src/state.py", state), ("src/graph.py", &unread)]);
    assert!(!rule(&f).found, "{:?}", rule(&f));
}

/// A judge that asks its bound model for a single opinion once per run gives one opinion for
/// every criterion; asked in a loop over the criteria, or handed to code that maps it over
/// them, it is asked per criterion (or not decided), never charged.
#[test]
fn a_single_opinion_asked_once_per_run_answers_for_every_criterion() {
    let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass Evidence(BaseModel):\n    goal: str\n    found: bool\n\nclass JudicialOpinion(BaseModel):\n    judge: str\n    criterion_id: str\n    score: int\n    argument: str\n\nclass S(TypedDict):\n    evidences: Annotated[List[Evidence], operator.add]\n    opinions: Annotated[List[JudicialOpinion], operator.add]\n    rubric: list\n";
    let graph = |body: &str| {
        format!(
            "from langgraph.graph import StateGraph, START, END\nfrom langchain_openai import ChatOpenAI\nfrom src.state import S, Evidence, JudicialOpinion\n\nllm = ChatOpenAI().with_structured_output(JudicialOpinion)\n\ndef look(state):\n    return {{\"evidences\": [Evidence(goal=\"g\", found=True)]}}\n\n{body}\ndef p(state):\n    return judge(\"Prosecutor\", state)\n\ndef d(state):\n    return judge(\"Defense\", state)\n\ng = StateGraph(S)\ng.add_node(\"look\", look)\ng.add_node(\"p\", p)\ng.add_node(\"d\", d)\ng.add_edge(START, \"look\")\ng.add_edge(\"look\", \"p\")\ng.add_edge(\"look\", \"d\")\ng.add_edge(\"p\", END)\ng.add_edge(\"d\", END)\napp = g.compile()\n"
        )
    };
    let per_criterion = |body: &str| {
        let f = investigate(&[("src/state.py", state), ("src/graph.py", &graph(body))]);
        nuance_evidence(&f)
            .into_iter()
            .find(|e| e.id == "repo.personas.per_criterion")
            .expect("the per-criterion fact")
    };
    // once per run, retried over `range`: one opinion for all the criteria
    let once = "def judge(who, state):\n    for attempt in range(3):\n        try:\n            op = llm.invoke(who + str(state[\"evidences\"]))\n            return {\"opinions\": [op]}\n        except Exception:\n            pass\n    return {\"opinions\": []}\n";
    let e = per_criterion(once);
    assert!(!e.found, "{}", e.rationale);
    assert!(
        e.rationale.starts_with(
            "each judge gives one opinion for all the criteria: the call at src/graph.py:13"
        ),
        "{}",
        e.rationale
    );
    // in a loop over the rubric's criteria
    let looped = "def judge(who, state):\n    ops = []\n    for c in state[\"rubric\"]:\n        ops.append(llm.invoke(who + c + str(state[\"evidences\"])))\n    return {\"opinions\": ops}\n";
    assert!(per_criterion(looped).found);
    // a helper mapped over the criteria by an executor
    let mapped = "def one(c):\n    return llm.invoke(c)\n\ndef judge(who, state):\n    from concurrent.futures import ThreadPoolExecutor\n    with ThreadPoolExecutor() as ex:\n        ops = list(ex.map(one, state[\"rubric\"]))\n    return {\"opinions\": ops}\n";
    assert!(per_criterion(mapped).found);
}
