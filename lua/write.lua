-- write: create a file of the workspace, or replace one whole (atomically: the host writes a temporary file and
-- renames it over the old one). Missing parent directories are made. Use edit to change part of a file.

return {
  name = "write",
  description = "Write a file in the workspace: creates it (and missing directories) or replaces its whole content. "
    .. "To change part of an existing file use edit instead.",
  capabilities = { "write_file", "stat" },
  parameters = {
    type = "object",
    properties = {
      path = { type = "string", description = "File to write, relative to the workspace root." },
      content = { type = "string", description = "The complete new content of the file." },
    },
    required = { "path", "content" },
    additionalProperties = false,
  },
  handler = function(args)
    local path, content = args.path, args.content
    if type(path) ~= "string" or path == "" then return nil, "write: 'path' must be a non-empty string" end
    if type(content) ~= "string" then return nil, "write: 'content' must be a string" end
    local before = panto.stat(path)
    if before and before.type == "directory" then return nil, path .. ": is a directory" end
    local ok, err = panto.write_file(path, content)
    if not ok then return nil, err end
    local _, newlines = content:gsub("\n", "")
    local lines = newlines + ((#content > 0 and content:sub(-1) ~= "\n") and 1 or 0)
    local what = before and string.format("replaced its %d bytes", before.size) or "new file"
    return {
      text = string.format("Wrote %d bytes (%d lines) to %s (%s).", #content, lines, path, what),
      meta = { path = path, bytes = #content, created = before == nil },
    }
  end,
}
