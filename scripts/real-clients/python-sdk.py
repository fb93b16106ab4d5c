# The Anthropic Python SDK (1.13) against the emulator (ANTHROPIC_BASE_URL): create, stream,
# count_tokens, models.retrieve and models.list. Run by scripts/real-clients.sh.
import sys
import anthropic
c = anthropic.Anthropic(max_retries=0)
model = sys.argv[1] if len(sys.argv) > 1 else "claude-opus-5-5"
system = [{"type": "text", "text": "You are a terse assistant. " * 200, "cache_control": {"type": "ephemeral"}}]
msgs = [{"role": "user", "content": "say hi"}]
m = c.messages.create(model=model, max_tokens=256, system=system, messages=msgs)
print("create", m.id, m.stop_reason, [b.type for b in m.content], m.usage.cache_creation_input_tokens, m.usage.cache_read_input_tokens)
with c.messages.stream(model=model, max_tokens=256, system=system, messages=msgs) as s:
    final = s.get_final_message()
print("stream", final.id, [b.type for b in final.content], final.usage.cache_read_input_tokens)
print("count_tokens", c.messages.count_tokens(model=model, system=system, messages=msgs).input_tokens)
print("models.retrieve", c.models.retrieve(model).id)
print("models.list", len(list(c.models.list())))
