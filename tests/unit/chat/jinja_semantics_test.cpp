// Expression and statement semantics of the template interpreter. Expected
// strings are what Python jinja2 renders in transformers' chat-template
// environment for the same template.
#include <gtest/gtest.h>

#include <string>

#include "chat/chat_template.h"

namespace db::chat {
namespace {

using Json = nlohmann::ordered_json;

std::string render(const std::string& source, const Json& context = Json::object()) {
  return ChatTemplate::parse(source).render(context);
}

// The db::Error message a template fails with (parse or render).
std::string error_of(const std::string& source, const Json& context = Json::object()) {
  try {
    render(source, context);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(JinjaSemantics, Arithmetic) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 3 ** 2 }}|{{ 10 - 2 - 3 }}"), "7|9|64|5");
  EXPECT_EQ(render("{{ 1 / 2 }}|{{ 4 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 5.0 // 2 }}|{{ -5.5 % 2 }}"), "0.5|2.0|3|-4|2|-2|2.0|0.5");
  EXPECT_EQ(render("{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ -3 | abs }}|{{ - 3 | abs }}|{{ -1 ** 2 }}|{{ (-1) ** 2 }}"), "1024|0.5|3|3|1|1");
  EXPECT_EQ(render("{{ 'ab' * 3 }}|{{ 3 * 'ab' }}|{{ [1] * 2 }}|{{ [1] + [2] }}|{{ 'x' * -1 }}|{{ 'a' ~ (1 + 2) }}|{{ true + 1 }}"), "ababab|ababab|[1, 1]|[1, 2]||a3|2");
}

TEST(JinjaSemantics, NumberFormatting) {
  EXPECT_EQ(render("{{ 1e16 }}|{{ 1e15 }}|{{ 1.5e-5 }}|{{ 0.0001 }}|{{ 0.1 + 0.2 }}|{{ -0.0 }}|{{ 100.0 }}|{{ 1e100 }}|{{ 2.5e-3 }}"), "1e+16|1000000000000000.0|1.5e-05|0.0001|0.30000000000000004|-0.0|100.0|1e+100|0.0025");
  EXPECT_EQ(render("{{ 0x1F }}|{{ 0b101 }}|{{ 0o17 }}|{{ 1_000 }}|{{ 1.5e3 }}|{{ 1E-2 }}"), "31|5|15|1000|1500.0|0.01");
  EXPECT_EQ(render("{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.675|round(2) }}|{{ 42|round }}|{{ 42.55|round(1, 'floor') }}"), "2.0|4.0|2.67|42|42.5");
}

TEST(JinjaSemantics, LiteralsAndRepr) {
  EXPECT_EQ(render("{{ none }}|{{ true }}|{{ False }}|{{ None }}|{{ undefined_name }}|"), "None|True|False|None||");
  EXPECT_EQ(render("{{ [1, 'a', none, true, 1.0, {'k': 'v'}] }}|{{ ('a',) }}|{{ () }}|{{ (1, 2) }}"), "[1, 'a', None, True, 1.0, {'k': 'v'}]|('a',)|()|(1, 2)");
  EXPECT_EQ(render("{{ \"it's\" }}|{{ ['it\\'s', 'a\"b', 'a\\nb', 'both\\'\"', 'tab\\t'] }}"), "it's|[\"it's\", 'a\"b', 'a\\nb', 'both\\'\"', 'tab\\t']");
  EXPECT_EQ(render("{{ 'a' 'b' \"c\" }}|{{ '\\x41\\u00e9\\t|' }}|{{ '\\\\' }}|{{ '\\q' }}"), "abc|Aé\t||\\|\\q");
  EXPECT_EQ(render("{{ {1: 'a', 2.5: 'b', true: 'c', none: 'd'} }}|{{ ['é中', '\\x00\\x7f\\u00a0'] }}"), "{1: 'c', 2.5: 'b', None: 'd'}|['é中', '\\x00\\x7f\\xa0']");
}

TEST(JinjaSemantics, Comparisons) {
  EXPECT_EQ(render("{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 1 == 1.0 }}|{{ 'a' != 'b' }}|{{ 'a' in 'cat' }}|{{ 1 not in [1] }}|{{ 'x' in {'x': 1} }}"), "True|False|True|True|True|False|True");
  EXPECT_EQ(render("{{ [1, 2] == [1, 2] }}|{{ (1, 2) == [1, 2] }}|{{ [1, 2] < [1, 3] }}|{{ 'B' < 'a' }}|{{ 'é' > 'z' }}"), "True|False|True|True|True");
  EXPECT_EQ(render("{{ not true }}|{{ true and false }}|{{ 0 or 'x' }}|{{ '' and 1 }}|{{ 'a' if false else 'b' if false else 'c' }}|{{ 1 if false }}|"), "False|False|x||c||");
}

TEST(JinjaSemantics, StringMethods) {
  EXPECT_EQ(render("{{ '  a b  '.strip() }}|{{ ' a '.lstrip() }}|{{ ' a '.rstrip() }}|{{ 'xxhixx'.strip('x') }}"), "a b|a | a|hi");
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}"), "['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a b', 'c']");
  EXPECT_EQ(render("{{ 'abc'.startswith('a') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'abc'.find('c') }}|{{ 'a-b'.upper() }}|{{ 'AbC'.lower() }}"), "True|True|bba|2|A-B|abc");
  EXPECT_EQ(render("{{ 'hello world they\\'re'.title() }}|{{ 'hELLO'.capitalize() }}|{{ '-'.join(['a', 'b']) }}|{{ 'a=b'.partition('=') }}"), "Hello World They'Re|Hello|a-b|('a', '=', 'b')");
  EXPECT_EQ(render("{{ 'abc'[::-1] }}|{{ 'héllo'[1:3] }}|{{ 'abcdef'[-2:] }}|{{ '日本語'[1] }}|{{ 'é'|length }}"), "cba|él|ef|本|1");
  EXPECT_EQ(render("{{ '%s and %r' % ('a', 'b') }}|{{ '%5.2f|%-4d|%04d' % (3.14159, 7, 42) }}|{{ '{} {name}'.format(1, name='n') }}"), "a and 'b'| 3.14|7   |0042|1 n");
}

TEST(JinjaSemantics, Filters) {
  EXPECT_EQ(render("{{ '  padded \\n'|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'ABC'|lower }}|{{ 'abc'|upper }}|{{ 'hELLO wORLD'|capitalize }}|{{ 'hello world-wide (x)'|title }}"), "padded|hi|abc|ABC|Hello world|Hello World-Wide (X)");
  EXPECT_EQ(render("{{ [1, 2, 3]|join(', ') }}|{{ [1, 2]|first }}|{{ [1, 2]|last }}|{{ []|first }}|{{ 'abc'|list }}|{{ {'a': 1}|items|list }}"), "1, 2, 3|1|2||['a', 'b', 'c']|[('a', 1)]");
  EXPECT_EQ(render("{{ 42|string }}|{{ '12'|int + 1 }}|{{ 'x'|int }}|{{ '3.7'|int }}|{{ '2.5'|float }}|{{ 3|float }}"), "42|13|0|3|2.5|3.0");
  EXPECT_EQ(render("{{ x|default('d') }}|{{ ''|default('d') }}|{{ ''|default('d', true) }}|{{ none|default('n') }}|{{ x|length }}"), "d||d|None|0");
  EXPECT_EQ(render("{{ 'abc'|replace('b', 'B') }}|{{ 'a'|replace('', '-') }}|{{ [3, 1, 2]|sort }}|{{ ['b', 'A', 'c']|sort }}|{{ [1, 2, 1, 3]|unique|list }}|{{ [1, 5, 3]|max }}|{{ [1, 2, 3]|sum }}|{{ 'abc'|reverse }}"), "aBc|-a-|[1, 2, 3]|['A', 'b', 'c']|[1, 2, 3]|5|6|cba");
  EXPECT_EQ(render("{{ [{'n': 'x'}, {'n': 'y'}]|map(attribute='n')|join('+') }}|{{ ['1', '2']|map('int')|sum }}|{{ [1, 0, 2]|select|list }}|{{ [1, 2, 3, 4]|select('odd')|list }}|{{ [1, 2, 3]|reject('even')|list }}"), "x+y|3|[1, 2]|[1, 3]|[1, 3]");
  EXPECT_EQ(render("{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ '<a href=\"x\">'|e }}|{{ [1, 2, 3, 4, 5]|batch(2)|list }}|{{ {'b': 2, 'a': 1}|dictsort }}"), "a\n  b\n\n  c|  a\n  b|&lt;a href=&#34;x&#34;&gt;|[[1, 2], [3, 4], [5]]|[('a', 1), ('b', 2)]");
}

TEST(JinjaSemantics, Tojson) {
  EXPECT_EQ(render("{{ {'b': 1, 'a': [1, 2.5, none, true, 'é\"\\n']}|tojson }}"), "{\"b\": 1, \"a\": [1, 2.5, null, true, \"é\\\"\\n\"]}");
  EXPECT_EQ(render("{{ {'b': 1, 'c': {'d': []}}|tojson(indent=2) }}"), "{\n  \"b\": 1,\n  \"c\": {\n    \"d\": []\n  }\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ {'b': 1}|tojson(separators=(',', ':')) }}|{{ 'é'|tojson(ensure_ascii=true) }}|{{ 'x<y>&\\''|tojson }}|{{ 1e20|tojson }}|{{ (1, 2)|tojson }}"), "{\"a\": 2, \"b\": 1}|{\"b\":1}|\"\\u00e9\"|\"x<y>&'\"|1e+20|[1, 2]");
  EXPECT_EQ(render("{{ '\\x00\\x1f\\x7f'|tojson }}|{{ {1: 'a', none: 'd'}|tojson }}"), "\"\\u0000\\u001f\x7f""\"|{\"1\": \"a\", \"null\": \"d\"}");
}

TEST(JinjaSemantics, Tests) {
  EXPECT_EQ(render("{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 1 is iterable }}{{ [] is sequence }}{{ 1.5 is number }}"), "FalseTrueTrueTrueTrueTrueFalseTrueTrue");
  EXPECT_EQ(render("{{ true is true }}{{ 1 is true }}{{ false is false }}{{ 3 is odd }}{{ 4 is even }}{{ 6 is divisibleby 3 }}{{ 1 is integer }}{{ 1.0 is float }}{{ true is boolean }}{{ 2 is in [1, 2] }}{{ x is not defined }}"), "TrueFalseTrueTrueTrueTrueTrueTrueTrueTrueTrue");
}

TEST(JinjaSemantics, LoopVariables) {
  EXPECT_EQ(render("{% for x in [1, 2, 3] if x > 1 %}{{ loop.index }}/{{ loop.length }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.index0 }}{{ loop.first }}{{ loop.last }} {% else %}none{% endfor %}"), "1/2/2/1/0TrueFalse 2/2/1/0/1FalseTrue ");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] if false %}x{% else %}filtered{% endfor %}"), "empty|filtered");
  EXPECT_EQ(render("{% for a in [1, 2] %}{% for b in 'xy' %}{{ loop.index }}{{ b }}{% endfor %}{{ loop.index }}{% endfor %}"), "1x2y11x2y2");
  EXPECT_EQ(render("{% for x in 'ab' %}{{ loop.previtem }}{{ x }}{{ loop.nextitem }};{% endfor %}{% for x in [1, 2, 3] %}{{ loop.cycle('o', 'e') }}{% endfor %}"), "ab;ab;oeo");
  EXPECT_EQ(render("{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}={{ v }},{% endfor %}{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}"), "b=1,a=2,ba");
  EXPECT_EQ(render("{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"), "02");
}

TEST(JinjaSemantics, Scoping) {
  EXPECT_EQ(render("{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = x + 1 %}{{ x }};{% endfor %}{{ x }}"), "01;01;0");
  EXPECT_EQ(render("{% set ns = namespace(x=0) %}{% for i in [1, 2, 3] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}"), "6");
  EXPECT_EQ(render("{% if true %}{% set inner = 5 %}{% endif %}{{ inner }}|{% for i in [1] %}{% set y = 1 %}{% endfor %}{{ y }}|"), "5||");
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set x %}block {{ 1 + 1 }}{% endset %}[{{ x }}]{% set y | upper %}shout{% endset %}{{ y }}"), "12[block 2]SHOUT");
  EXPECT_EQ(render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}|{% filter upper %}hello {{ 'x' }}{% endfilter %}"), "3|HELLO X");
}

TEST(JinjaSemantics, Macros) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(name='c') }}"), "Hi a! Hi b? Hi c!");
  EXPECT_EQ(render("{% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4, k=5) }}"), "1-2-()-{}|1-3-(4,)-{'k': 5}");
  EXPECT_EQ(render("{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n }}*{{ fact(n - 1) }}{% endif %}{% endmacro %}{{ fact(4) }}"), "4*3*2*1");
  EXPECT_EQ(render("{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inner{% endcall %}"), "<inner>");
}

TEST(JinjaSemantics, WhitespaceControl) {
  EXPECT_EQ(render("  {% if true %}\n    yes\n  {% endif %}\nafter"), "    yes\nafter");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(render("a\n{{- 'x' -}}\nb\n{{ 'y' }}\n\nc"), "axb\ny\n\nc");
  EXPECT_EQ(render("{# comment #}\n  {# indented comment #}\nx {#- trimmed -#} y"), "xy");
  EXPECT_EQ(render("line1\n    {% for i in [1, 2] %}\n    item{{ i }}\n    {% endfor %}\nend\n"), "line1\n    item1\n    item2\nend");
  EXPECT_EQ(render("{%+ if true %}  keep{% endif +%}\nnext"), "  keep\nnext");
  EXPECT_EQ(render("  {{ 'v' }}  {% if true %}\n  z\n{% endif %}"), "  v    z\n");
  EXPECT_EQ(render("x {%- raw -%}  {{ y }}  {%- endraw -%} z"), "x{{ y }}z");
  EXPECT_EQ(render("line\r\nnext\r\n{% if true %}\r\nin\r\n{% endif %}\r\n"), "line\nnext\nin\n");
  EXPECT_EQ(render("{% for i in [1, 2] -%}\n  {{ i }}\n{%- endfor %}"), "12");
}

TEST(JinjaSemantics, NamespacesAndMacrosOutliveTheirScope) {
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me is defined }}"), "True");
  EXPECT_EQ(render("{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}x{% endmacro %}"
                   "{% set ns.m = m %}{% endfor %}{{ ns.m() }}"),
            "x");
}

TEST(JinjaSemantics, ContextValuesAndAttributeAccess) {
  const Json ctx = Json::parse(R"({"d": {"b": 2}, "x": [9, 8], "messages": [{"role": "user", "content": "hi"},
                                  {"role": "assistant", "content": "yo"}]})");
  EXPECT_EQ(render("{{ d.a is defined }}{{ d['a'] is defined }}{{ d.b }}{{ d['b'] }}{{ d.get('a', 'dflt') }}{{ d.get('b') }}", ctx),
            "FalseFalse22dflt2");
  EXPECT_EQ(render("{{ messages[0]['content'] }}{{ messages[-1].content }}{{ messages|length }}{{ x.0 }}{{ x[5] }}", ctx),
            "hiyo29");
  EXPECT_EQ(render("{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join }}", ctx), "hi");
  EXPECT_EQ(render("{{ none.foo }}|{{ [1, 2]['a'] }}|{{ {'items': 5}['items'] }}"), "||5");
}

TEST(JinjaSemantics, ContextKeyOrderIsKept) {
  const Json ctx = Json::parse(R"({"d": {"b": 1, "a": {"z": 0, "y": [1]}}})");
  EXPECT_EQ(render("{{ d|tojson }}|{{ d }}|{% for k in d %}{{ k }}{% endfor %}", ctx),
            R"({"b": 1, "a": {"z": 0, "y": [1]}}|{'b': 1, 'a': {'z': 0, 'y': [1]}}|ba)");
  // A sorted-key nlohmann::json context iterates alphabetically.
  EXPECT_EQ(ChatTemplate::parse("{{ d|tojson }}").render(nlohmann::json::parse(R"({"d": {"b": 1, "a": 2}})")),
            R"({"a": 2, "b": 1})");
}

TEST(JinjaSemantics, RaiseExceptionCarriesTheMessage) {
  try {
    render("{% if true %}{{ raise_exception('Conversation roles must alternate ' ~ 1) }}{% endif %}");
    FAIL() << "no exception";
  } catch (const TemplateRaisedError& e) {
    EXPECT_STREQ(e.what(), "Conversation roles must alternate 1");
  }
}

TEST(JinjaSemantics, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("line one\n{% if %}"),
            "chat template syntax error at line 2, column 7: expected an expression, got end of statement block");
  EXPECT_EQ(error_of("{{ x "), "chat template syntax error at line 1, column 6: unexpected end of template inside a {{ }} tag");
  EXPECT_EQ(error_of("{# c"), "chat template syntax error at line 1, column 1: missing end of comment tag");
  EXPECT_EQ(error_of("{{ 'abc }}"), "chat template syntax error at line 1, column 4: unterminated string literal");
  EXPECT_EQ(error_of("{{ x | nosuch }}"), "chat template syntax error at line 1, column 8: no filter named 'nosuch'");
  EXPECT_EQ(error_of("{% foo %}"), "chat template syntax error at line 1, column 4: encountered unknown tag 'foo'");
  EXPECT_EQ(error_of("{% include 'x' %}"),
            "chat template syntax error at line 1, column 4: the 'include' tag is not supported in chat templates");
  EXPECT_EQ(error_of("{% if true %}a"),
            "chat template syntax error at line 1, column 4: unexpected end of template; looking for 'elif' or "
            "'else' or 'endif' to close the tag opened here");
  EXPECT_EQ(error_of("{{ (1 }}"), "chat template syntax error at line 1, column 7: unexpected '}', expected ')'");
  EXPECT_NE(error_of("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}").find("nesting too deep"),
            std::string::npos);
  // Unknown filters inside `if` only fail when they run, as in jinja2.
  EXPECT_EQ(render("{% if false %}{{ x | nosuch }}{% endif %}ok"), "ok");
}

TEST(JinjaSemantics, RuntimeErrorsNameLineAndCause) {
  EXPECT_EQ(error_of("{{ x.y }}"), "chat template error at line 1, column 1: 'x' is undefined");
  EXPECT_EQ(error_of("a\n{{ 1 }}\n{{ d.a.b }}", Json::parse(R"({"d": {}})")),
            "chat template error at line 3, column 1: 'dict object' has no attribute 'a'");
  EXPECT_EQ(error_of("{{ 'a' + 1 }}"), "chat template error at line 1, column 1: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of("{% for x in 1 %}{% endfor %}"), "chat template error at line 1, column 4: 'int' object is not iterable");
  EXPECT_EQ(error_of("{% set l = [1] %}{{ l.append(2) }}"),
            "chat template error at line 1, column 18: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(error_of("{% set ns = namespace(_x=1) %}"),
            "chat template error at line 1, column 4: Chat templates cannot store underscore-prefixed attributes on a "
            "namespace, but got '_x'. Please rename the attribute.");
  EXPECT_EQ(error_of("{{ range(100001) }}"),
            "chat template error at line 1, column 1: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  EXPECT_EQ(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
            "chat template error at line 1, column 16: maximum macro recursion depth exceeded");
  EXPECT_EQ(error_of("{{ 9223372036854775807 + 1 }}"),
            "chat template error at line 1, column 1: integer overflow (values beyond 64 bits are not supported)");
  EXPECT_EQ(error_of("{{ 1 / 0 }}"), "chat template error at line 1, column 1: division by zero");
}

TEST(ApplyChatTemplate, PassesVariablesLikeTransformers) {
  const ChatTemplate t = ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}{{ m }}{% endfor %}{{ add_generation_prompt }}{{ tools }}{{ documents }}"
      "{{ eos_token }}{{ extra_var }}");
  const Json messages = Json::parse(R"([{"role": "user", "content": "hi", "name": null},
      {"role": "assistant", "content": "ok", "reasoning_content": "why"}])");
  EXPECT_EQ(apply_chat_template(t, messages, true, "<s>", "</s>", Json::parse(R"({"extra_var": 7})")),
            "<s>{'role': 'user', 'content': 'hi'}{'thinking': 'why', 'role': 'assistant', 'content': 'ok', "
            "'reasoning_content': 'why'}TrueNoneNone</s>7");
  EXPECT_THROW(apply_chat_template(t, Json::object(), false, "", ""), Error);
}

}  // namespace
}  // namespace db::chat
