-- bash: run a shell command in the workspace (bash -c, or the system shell where there is no bash), with a timeout.
-- The host runs it in its own process group with a minimal environment and caps its output; this tool shows the exit
-- code, stdout and stderr, each cut by the one truncation rule (head and tail kept). A command that fails (a non-zero
-- exit, a signal, the timeout) is an error result, its output included.

local truncate = require("truncate")

local DEFAULT_TIMEOUT_S = 120
local MAX_TIMEOUT_S = 1800

local function section(name, s)
  if s == nil or s == "" then return nil end
  local text = truncate.text(s, { max_lines = 1000, max_bytes = 30 * 1024, more = "redirect the output to a file and read or grep it" })
  return string.format("[%s]\n%s", name, text)
end

return {
  name = "bash",
  description = "Run a shell command in the workspace (bash -c) and see its exit code, stdout and stderr. Use it to "
    .. "build, test, run git and other programs. Commands run non-interactively (no terminal, no prompts) with a "
    .. "timeout (default 120 s). Prefer the read, find, grep, edit and write tools for files.",
  capabilities = { "exec" },
  parameters = {
    type = "object",
    properties = {
      command = { type = "string", description = "The command line, run by bash -c." },
      timeout = { type = "integer", minimum = 1, maximum = MAX_TIMEOUT_S, description = "Seconds before the command is killed. Default 120." },
      cwd = { type = "string", description = "Directory to run in, relative to the workspace root. Default: the root." },
    },
    required = { "command" },
    additionalProperties = false,
  },
  handler = function(args)
    local command = args.command
    if type(command) ~= "string" or command:match("^%s*$") then return nil, "bash: 'command' must be a non-empty string" end
    local timeout_s = math.tointeger(args.timeout) or DEFAULT_TIMEOUT_S
    local opts = { timeout_ms = timeout_s * 1000 }
    if args.cwd and args.cwd ~= "" then opts.cwd = args.cwd end
    local r, err = panto.exec({ "bash", "-c", command }, opts)
    if not r and tostring(err):find("not found", 1, true) then
      opts.shell = true
      r, err = panto.exec(command, opts)
    end
    if not r then return nil, err end
    local parts = {}
    local status
    if r.timed_out then status = string.format("killed after the %d s timeout", timeout_s)
    elseif r.signal then status = "ended by signal " .. tostring(r.signal)
    else status = "exit code " .. tostring(r.code) end
    parts[#parts + 1] = "[" .. status .. "]"
    parts[#parts + 1] = section("stdout", r.stdout)
    parts[#parts + 1] = section("stderr", r.stderr)
    if r.truncated then parts[#parts + 1] = "[the host cut the output at its cap; the middle is missing]" end
    local text = table.concat(parts, "\n")
    if r.code ~= 0 or r.timed_out or r.signal then return nil, text end
    return { text = text, meta = { command = command, code = r.code } }
  end,
}
