#!/usr/bin/env python3
"""Render every (template, conversation, add_generation_prompt) case of
tests/data/chat/cases.json with Python jinja2 exactly as Hugging Face
transformers' apply_chat_template does, and write tests/data/chat/expected.json.

The rendering goes through transformers' own helpers: messages are normalized
(None-valued keys dropped), then render_jinja_template compiles the template in
its ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[loopcontrols, generation tracker]) with the tojson override
(ensure_ascii=False), raise_exception, strftime_now, namespace and dict.

Each expected case holds either "output" (the rendered text), "raised" (the
message a template passed to raise_exception) or "error" (another exception,
type and message, for information: the C++ side only checks that it fails).

Usage: python3 scripts/gen_chat_fixtures.py   (from the repository root)
"""
import json
import pathlib
import sys

import jinja2
import transformers
from transformers.utils import chat_template_utils as ctu

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "chat"


def render_case(source, template_meta, conversation, add_generation_prompt):
    extra = dict(conversation.get("extra", {}))
    tools = extra.pop("tools", None)
    documents = extra.pop("documents", None)
    messages = ctu._normalize_chat_messages(conversation["messages"])
    try:
        rendered, _ = ctu.render_jinja_template(
            conversations=[messages],
            tools=tools,
            documents=documents,
            chat_template=source,
            add_generation_prompt=add_generation_prompt,
            bos_token=template_meta["bos_token"],
            eos_token=template_meta["eos_token"],
            **extra,
        )
        return {"output": rendered[0]}
    except jinja2.exceptions.TemplateError as e:
        if type(e) is jinja2.exceptions.TemplateError:
            return {"raised": str(e)}
        return {"error": f"{type(e).__name__}: {e}"}
    except Exception as e:  # TypeError and friends raised inside the template
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    cases = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))
    out = []
    for template_name, meta in cases["templates"].items():
        source = (DATA / "templates" / meta["file"]).read_text(encoding="utf-8")
        for conversation_name, conversation in cases["conversations"].items():
            for add_generation_prompt in (False, True):
                case = {
                    "template": template_name,
                    "conversation": conversation_name,
                    "add_generation_prompt": add_generation_prompt,
                }
                case.update(render_case(source, meta, conversation, add_generation_prompt))
                out.append(case)
    expected = {
        "generated_by": "scripts/gen_chat_fixtures.py",
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "cases": out,
    }
    path = DATA / "expected.json"
    path.write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    kinds = {k: sum(1 for c in out if k in c) for k in ("output", "raised", "error")}
    print(f"wrote {path.relative_to(ROOT)}: {len(out)} cases {kinds}", file=sys.stderr)


if __name__ == "__main__":
    main()
