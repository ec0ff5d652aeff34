"""The audit report (report.md), rendered from a certificate and the run's figures."""
from __future__ import annotations

from typing import Any, Mapping

from veriguard.verify import counterexample as cx
from veriguard.verify.verdicts import Verdict, worst


def _table(rows: list[list[str]], head: list[str]) -> str:
    esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def extraction_section(extraction: Mapping[str, Any]) -> list[str]:
    """How each argument is read; for an `llm` entry, the server the agent's text is sent to and the environment
    variable sent with it as the API key (the spec chooses both: an auditor checks them)."""
    rows = []
    for argument, cfg in extraction.items():
        if not isinstance(cfg, Mapping):
            continue
        kind = str(cfg.get("from", "?"))
        server, key = "none (read in the monitor's process)", "none"
        if kind == "llm":
            provider = str(cfg.get("provider", "anthropic"))
            model = f"model {cfg['model']}" if "model" in cfg else "the default model"
            default = "Anthropic's API (https://api.anthropic.com, or $ANTHROPIC_BASE_URL)" if provider == "anthropic" \
                else "none given"
            server = f"{model} at {cfg.get('base_url', default)} ({provider})"
            key = f"${cfg['api_key_env']}" if "api_key_env" in cfg else \
                "$ANTHROPIC_API_KEY (default)" if provider == "anthropic" else "none sent"
        rows.append([argument, kind, server, key])
    if not rows:
        return []
    return ["## Extraction", "", "How the monitor reads each argument from what the agent proposed; an `llm` entry "
            "sends the agent's text to a model server, with the named environment variable as its API key.", "",
            _table(rows, ["argument", "extractor", "sends the agent's text to", "API key from"]), ""]


def render(cert: dict[str, Any], run: dict[str, Any], extraction: Mapping[str, Any] | None = None) -> str:
    """report.md; `extraction`: the build's extraction.json `extraction` object, listed when given."""
    name = cert["policy"]
    status = cert["status"]
    if not cert["fully_proved"]:  # the reason, by the precedence of verify.verdicts
        status += f" ({worst(Verdict(g['verdict']) for g in cert['gates']).value})"
    out = [f"# Policy `{name}`: {status}", ""]
    verdict_line = ("Every gate holds: Nagini proved the policy against its complete contract and every property, "
                    "and every test passed." if cert["fully_proved"] else
                    "**Not every gate holds: this policy is not certified.** "
                    "The loader refuses it unless told explicitly to accept it.")
    out += [verdict_line, "", f"Synthesized {cert['synthesized_at']} by the {cert['path']} path.", ""]
    out += ["## Request", "", cert.get("request", "").strip(), ""]
    agent = cert.get("agent") or {}
    if agent.get("description"):
        out += ["## Agent", "", str(agent["description"]).strip(), ""]
    out += ["## Rules (the contract)", "", "A request is denied exactly when a rule fails; the decision names every "
            "failed rule and every denied item.", "", "```", cert["contract_text"]["rules"], "```", ""]
    out += extraction_section(extraction) if isinstance(extraction, Mapping) else []
    out += ["## What was proved", ""]
    proof = cert.get("proof") or {}
    out.append(f"- Nagini: **{proof.get('verdict', 'NOT RUN')}**" + (f" ({proof['detail']})" if proof.get("detail") else ""))
    out.append("- Proved for every input in the domain (unbounded lists): the policy allows exactly when every rule "
               "holds, reports exactly the violated rules, and reports exactly the failing items."
               if proof.get("verdict") == "PROVED" else "- The policy's contract is **not** proved; see below.")
    props = cert.get("properties") or []
    if props:
        out += ["", "Properties (requirements stated independently of the rules):", ""]
        out.append(_table([[p["id"], p["message"], p["nagini"] + (f" ({p['detail']})" if p.get("detail") else ""),
                            p["z3"]] for p in props],
                          ["property", "requirement", "Nagini", "follows from the rules (z3, bounded lists)"]))
        out += ["", "```", cert["contract_text"]["properties"], "```"]
    diags = proof.get("diagnostics") or []
    if diags:
        out += ["", "### Not proved", ""]
        for d in diags:
            where = f"line {d['line']} of policy_verified.py, function `{d['function']}`" if d.get("line") else d.get("file", "")
            first, *rest = str(d["message"]).splitlines() or [""]
            out.append(f"- **{d.get('clause') or d['code']}** ({d['code']}) at {where}: {first}")
            if rest:  # e.g. the last lines a crashed verifier wrote
                out += ["", "  ```"] + [f"  {line}" for line in rest] + ["  ```"]
            if d.get("counterexample"):
                out.append(f"  - counterexample: {cx.render(d['counterexample'])}"
                           + {True: " (reproduced on the policy)", False: " (does not reproduce)"}.get(d.get("confirmed"), ""))
    out += ["", "## Gates", ""]
    out.append(_table([[g["name"], g["verdict"], g["summary"]] for g in cert["gates"]], ["gate", "verdict", "figures"]))
    for g in cert["gates"]:
        if g["name"] == "examples" and g.get("results"):
            out += ["", "### Examples", ""]
            out.append(_table([[r["name"], r["verdict"], r.get("error", "")] for r in g["results"]],
                              ["example", "verdict", "detail"]))
        if g["name"] == "contract (z3)":
            out += ["", f"### Contract checks (z3, lists up to {g.get('bound')} items)", ""]
            out.append(_table([[f["check"], f["subject"], f["verdict"], f["message"]] for f in g.get("findings", [])],
                              ["check", "subject", "verdict", "detail"]))
    mut = cert.get("mutation") or {}
    if mut:
        out += ["", "### Mutation", "", f"Score {mut.get('score')} ({mut.get('killed')}/{mut.get('total')} mutants "
                f"killed: {mut.get('by_tests')} by tests, {mut.get('by_proof')} by proof; threshold {mut.get('threshold')}; "
                f"mutant limit {mut.get('limit', 'not recorded')})."]
        for s in mut.get("survivors", []):
            out.append(f"- survived: mutant {s['id']} ({s['operator']}, line {s['line']}): {s['change']}"
                       + (f" — {s['note']}" if s.get("note") else ""))
    if cert.get("approval"):
        a = cert["approval"]
        out += ["", "## Approved update", "", f"This policy allows what the previous policy (sha256 "
                f"`{a['previous_policy']}`) denied: {a['newly_allowed']} newly allowed witness(es), approved by "
                f"**{a['by']}** at {a['approved_at']}.", "", f"Reason: {a['reason']}"]
    if cert.get("assumptions"):
        out += ["", "## Assumptions made during synthesis", ""]
        out += [f"- {a.get('question', '')}: **{a.get('answer', '')}** ({a.get('why', '')})" for a in cert["assumptions"]]
    out += ["", "## Hashes and tools", ""]
    h = cert["hashes"]
    rows = [["spec", h["spec"]], ["contract", h["contract"]], ["verified source", h["verified_source"]],
            ["policy.py", h["policy"]]] + [[f"table {k}", v] for k, v in h.get("tables", {}).items()]
    if cert.get("transcript"):
        rows.append(["transcript", cert["transcript"].get("hash", "")])
    out.append(_table(rows, ["artifact", "sha256"]))
    out += ["", "Tools: " + ", ".join(f"{k} {v}" for k, v in sorted(cert.get("tools", {}).items())), ""]
    if run:
        out += ["## This run", ""]
        out += [f"- total {run.get('seconds', 0):.1f} s; " + ", ".join(f"{k} {v:.1f} s" for k, v in
                                                                     run.get("gate_seconds", {}).items())]
        if run.get("worker_peak_rss_mb"):
            out.append(f"- verifier worker peak memory {run['worker_peak_rss_mb']:.0f} MB")
        out.append("")
    return "\n".join(out)
