-- find: files and directories of the workspace whose path matches a glob. A pattern without "/" matches names
-- (`*.ts`, `README*`); one with "/" matches the path below the search root (`src/**/*.test.ts`). The walk leaves out
-- `.git` and what .gitignore files exclude (unless `all`), never follows symbolic links, and stops after 50,000
-- entries with a note; at most `limit` results are listed.

local glob = require("glob")
local truncate = require("truncate")
local walk = require("walk")

return {
  name = "find",
  description = "Find files and directories in the workspace by glob: `*.py`, `test_*`, `src/**/*.ts`, "
    .. "`{a,b}.json`. A pattern without / matches file names at any depth; with / it matches the path below `path`. "
    .. "Honours .gitignore (pass all = true to include ignored files). Directories end in /.",
  capabilities = { "list_dir", "read_file", "stat" },
  parameters = {
    type = "object",
    properties = {
      pattern = { type = "string", description = "Glob to match (e.g. \"*.lua\", \"src/**/*.ts\")." },
      path = { type = "string", description = "Directory to search, relative to the workspace root. Default: the root." },
      limit = { type = "integer", minimum = 1, maximum = 10000, description = "Most results listed. Default 1000." },
      all = { type = "boolean", description = "Also search what .gitignore excludes, and .git. Default false." },
    },
    required = { "pattern" },
    additionalProperties = false,
  },
  handler = function(args)
    local pattern = args.pattern
    if type(pattern) ~= "string" or pattern == "" then return nil, "find: 'pattern' must be a non-empty string" end
    local root = args.path
    if root == nil or root == "" then root = "." end
    local limit = math.tointeger(args.limit) or 1000
    local st, err = panto.stat(root)
    if not st then return nil, err end
    if st.type ~= "directory" then return nil, root .. ": not a directory (find searches a directory)" end
    local by_path = pattern:find("/", 1, true) ~= nil
    local match = glob.compile(pattern)
    local found, total = {}, 0
    local prefix = root == "." and "" or (root:gsub("/+$", "") .. "/")
    local stats = walk.tree(root, { all = args.all == true }, function(path, e)
      local rel = path:sub(#prefix + 1)
      local subject = by_path and rel or e.name
      if match(subject) then
        total = total + 1
        if #found < limit then found[#found + 1] = e.type == "directory" and (path .. "/") or path end
      end
    end)
    table.sort(found)
    local lines = found
    if total > #found then
      lines[#lines + 1] = string.format("[%d more matches not listed; narrow the pattern or pass a larger limit]",
        total - #found)
    end
    local stopped = walk.stopped_note(stats)
    if stopped then lines[#lines + 1] = stopped end
    for _, e in ipairs(stats.errors) do lines[#lines + 1] = "[not searched: " .. e .. "]" end
    if total == 0 then
      table.insert(lines, 1, string.format("no match for %s in %s%s", pattern, root,
        args.all and "" or " (.gitignore'd files left out; all = true includes them)"))
    end
    local text = truncate.text(table.concat(lines, "\n"), { more = "narrow the pattern or search a subdirectory" })
    return { text = text, meta = { pattern = pattern, path = root, matches = total } }
  end,
}
