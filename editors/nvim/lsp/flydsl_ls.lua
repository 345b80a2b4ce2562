-- flydsl-ls for Neovim 0.11+: put this directory on 'runtimepath' (or copy this file to
-- ~/.config/nvim/lsp/flydsl_ls.lua), then call vim.lsp.enable('flydsl_ls').
-- Override any field with vim.lsp.config('flydsl_ls', { ... }).
--
-- In attached buffers, on_attach adds buffer-local commands; the first five run the server's
-- workspace/executeCommand commands through client:exec_cmd:
--   :FlydslCompile [example] [arch]   compile a `# flydsl: example` function (default: the first)
--   :FlydslShowIsa [example] [arch]   compile and open the ISA of its first kernel, linked to the
--                                     source: the cursor line's instructions lit, <CR> goes back
--   :FlydslLaunch [example] [arch]    compile and launch it (needs a ROCm GPU)
--   :FlydslVerifyFix                  compile before and after the fix under the cursor
--   :FlydslCompareDisk                compile the examples from the unsaved buffer and from
--                                     the file on disk: resources, ISA by source line
--   :FlydslMigrate [function]         every fix (unsafe included) in the kernel under the cursor
--                                     (or FUNCTION) and the helpers only it uses; compiled
--                                     before and after first when the file has examples
--   :FlydslRule                       open the rule page of the finding under the cursor
-- The last result (a table, see docs/compile.md) is kept in b:flydsl_result. Files the
-- server shows (the ISA, a verifyFix diff, a comparison's report) and rule pages open
-- read-only in a split.

local commands = {
  FlydslCompile = { command = 'flydsl-ls.compile', desc = 'flydsl-ls: compile a kernel example' },
  FlydslShowIsa = { command = 'flydsl-ls.showIsa', desc = 'flydsl-ls: compile and show the ISA' },
  FlydslLaunch = { command = 'flydsl-ls.launch', desc = 'flydsl-ls: compile and launch a kernel example' },
  FlydslVerifyFix = { command = 'flydsl-ls.verifyFix', desc = 'flydsl-ls: verify the fix under the cursor by compiling' },
  FlydslCompareDisk = {
    command = 'flydsl-ls.compareWithDisk',
    desc = 'flydsl-ls: compile the unsaved buffer and the file on disk: resources and ISA by source line',
  },
}

local function given(value)
  return value ~= nil and value ~= vim.NIL and value ~= ''
end

--- Open a file the server wrote (ISA, IR, a verifyFix diff) or a rule page read-only
--- (nomodifiable, buftype=nofile) in a split beside the current window, whose buffer stays
--- as it was. A window already showing such a file is reused: splits do not pile up.
local function open_readonly(path, focus)
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].swapfile = false
  vim.fn.bufload(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.b[buf].flydsl_artifact = true
  local target
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local shown = vim.api.nvim_win_get_buf(win)
    if shown == buf or vim.b[shown].flydsl_artifact then target = win break end
  end
  if target then
    vim.api.nvim_win_set_buf(target, buf)
  else
    target = vim.api.nvim_open_win(buf, false, { split = 'right', win = 0 })
  end
  if focus then vim.api.nvim_set_current_win(target) end
end

-- A source buffer and the ISA a compile with line info showed of it: the instructions of
-- the source line under the cursor are highlighted in the ISA (and scrolled to) as the
-- cursor moves; <CR> on an instruction goes to its source line. (The server's result gives
-- each instruction's row in the ISA file and its source lines: kernels[i].isaRows.)
local ns = vim.api.nvim_create_namespace('flydsl_isa')
local links = {} -- source bufnr -> { isa = bufnr, rows_of = { [line] = { rows } } }
local isa_links = {} -- ISA bufnr -> { source = bufnr, line_of = { [row] = { file, line } } }

local function highlight_isa(bufnr)
  local link = links[bufnr]
  if not link or not vim.api.nvim_buf_is_valid(link.isa) then return end
  vim.api.nvim_buf_clear_namespace(link.isa, ns, 0, -1)
  local rows = link.rows_of[vim.api.nvim_win_get_cursor(0)[1]] or {}
  for _, row in ipairs(rows) do
    vim.api.nvim_buf_set_extmark(link.isa, ns, row, 0, { line_hl_group = 'Visual' })
  end
  vim.b[bufnr].flydsl_isa_highlight = rows -- what is lit (for scripts and the e2e test)
  if rows[1] then
    for _, win in ipairs(vim.fn.win_findbuf(link.isa)) do
      vim.api.nvim_win_set_cursor(win, { rows[1] + 1, 0 })
    end
  end
end

local function goto_source(isa_buf)
  local link = isa_links[isa_buf]
  local at = link and link.line_of[vim.api.nvim_win_get_cursor(0)[1] - 1]
  if not at or not vim.api.nvim_buf_is_valid(link.source) then return end
  local win = vim.fn.win_findbuf(link.source)[1]
  if at[1] ~= vim.api.nvim_buf_get_name(link.source) or not win then
    vim.cmd('wincmd p')
    vim.cmd('edit ' .. vim.fn.fnameescape(at[1])) -- a helper's line, in another file
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(0, { at[2], 0 })
end

local function link_isa(bufnr, kernel)
  local isa = kernel and kernel.files and kernel.files.isa
  local isa_buf = given(isa) and vim.fn.bufnr(isa) or -1
  if isa_buf == -1 or type(kernel.isaRows) ~= 'table' then return end
  local source = vim.fn.resolve(vim.api.nvim_buf_get_name(bufnr))
  local rows_of, line_of, same = {}, {}, {}
  for _, entry in ipairs(kernel.isaRows) do
    line_of[entry.row] = entry.lines[1]
    for _, at in ipairs(entry.lines) do
      if same[at[1]] == nil then same[at[1]] = vim.fn.resolve(at[1]) == source end
      if same[at[1]] then
        rows_of[at[2]] = rows_of[at[2]] or {}
        table.insert(rows_of[at[2]], entry.row)
      end
    end
  end
  links[bufnr] = { isa = isa_buf, rows_of = rows_of }
  isa_links[isa_buf] = { source = bufnr, line_of = line_of }
  local group = vim.api.nvim_create_augroup('flydsl_isa_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd('CursorMoved', { group = group, buffer = bufnr, callback = function() highlight_isa(bufnr) end })
  vim.keymap.set('n', '<CR>', function() goto_source(isa_buf) end, { buffer = isa_buf, desc = 'flydsl-ls: go to the source line' })
  highlight_isa(bufnr)
end

--- The flydsl-ls finding under the cursor, as the server sent it (for verifyFix).
local function diagnostic_at_cursor(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = row - 1 })) do
    local lsp = d.user_data and d.user_data.lsp
    if lsp and d.source == 'flydsl-ls' and d.col <= col and col <= (d.end_col or d.col) then
      return lsp
    end
  end
end

--- :FlydslMigrate [function]: the function named, else the kernel under the cursor (the
--- server's refactor.rewrite.migrateKernel code action there).
local function migrate(client, bufnr, opts)
  if not given(opts.fargs[1]) then
    vim.lsp.buf.code_action({
      context = { only = { 'refactor.rewrite.migrateKernel.flydsl-ls' }, diagnostics = {} },
      apply = true,
    })
    return
  end
  local arguments = { vim.uri_from_bufnr(bufnr), vim.NIL, opts.fargs[1] }
  client:exec_cmd({ title = 'FlydslMigrate', command = 'flydsl-ls.migrateKernel', arguments = arguments }, { bufnr = bufnr },
    function(err, result)
      if err then
        vim.notify('flydsl-ls: flydsl-ls.migrateKernel failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif vim.api.nvim_buf_is_valid(bufnr) then
        vim.b[bufnr].flydsl_result = result
      end
    end)
end

--- :FlydslRule: the page the finding's codeDescription links to, a file installed with
--- flydsl-ls (flydsl_ls/data/rules/FLYnnn.md).
local function open_rule(bufnr)
  local lsp = diagnostic_at_cursor(bufnr)
  local href = lsp and lsp.codeDescription and lsp.codeDescription.href
  if not given(href) then
    vim.notify('flydsl-ls: no flydsl-ls finding under the cursor', vim.log.levels.WARN)
    return
  end
  open_readonly(vim.uri_to_fname(href), true)
end

local function run(client, bufnr, name, opts)
  local spec = commands[name]
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  if spec.command == 'flydsl-ls.verifyFix' then
    argument.diagnostic = diagnostic_at_cursor(bufnr)
    if not argument.diagnostic then
      vim.notify('flydsl-ls: no flydsl-ls finding under the cursor', vim.log.levels.WARN)
      return
    end
  else
    argument.example = opts.fargs[1]
    argument.arch = opts.fargs[2]
  end
  client:exec_cmd({ title = name, command = spec.command, arguments = { argument } }, { bufnr = bufnr }, function(err, result)
    if err then
      vim.notify(('flydsl-ls: %s failed: %s'):format(spec.command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.b[bufnr].flydsl_result = result
    end
    -- The server shows its message (window/showMessage) and, for showIsa, asks Neovim to
    -- open the ISA (window/showDocument); open it here only if that did not happen.
    if spec.command == 'flydsl-ls.showIsa' and result and result.ok then
      local kernel = result.kernels and result.kernels[1]
      local isa = kernel and kernel.files and kernel.files.isa
      if given(isa) and not given(result.shown) then open_readonly(isa, false) end
      link_isa(bufnr, kernel)
    end
  end)
end

---@type vim.lsp.Config
return {
  cmd = { 'flydsl-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', '.git' },
  -- Editor settings go on top of [tool.flydsl-ls] in the nearest pyproject.toml.
  -- Keys: select, ignore, targetArch, flydslVersion, logLevel, diagnosticsDelay (ms),
  -- compileTimeout (s), inlayHints (default true), isaHints (default false: after a compile,
  -- each source line's instruction counts). vim.empty_dict(): an empty table would be sent as a JSON list.
  init_options = vim.empty_dict(),
  settings = {
    ['flydsl-ls'] = vim.empty_dict(),
  },
  handlers = {
    -- The server shows the files it wrote (the ISA of :FlydslShowIsa, a verifyFix diff):
    -- read-only in a split, not in place of the kernel as Neovim's default would, and the
    -- kernel keeps the focus (`:w` right after it wrote the read-only split: E382). A file
    -- being edited (the example "Add compile example" just wrote) is shown in place, by
    -- Neovim's default: its window, the cursor on the selection.
    ['window/showDocument'] = function(err, params, ctx)
      local editing = not err and vim.fn.bufnr(vim.uri_to_fname(params.uri))
      if err or params.external or (editing ~= -1 and vim.api.nvim_buf_is_loaded(editing) and vim.bo[editing].buftype == '') then
        return vim.lsp.handlers['window/showDocument'](err, params, ctx)
      end
      open_readonly(vim.uri_to_fname(params.uri), false)
      return { success = true }
    end,
  },
  on_attach = function(client, bufnr)
    for name, spec in pairs(commands) do
      vim.api.nvim_buf_create_user_command(bufnr, name, function(opts)
        run(client, bufnr, name, opts)
      end, { nargs = '*', desc = spec.desc })
    end
    vim.api.nvim_buf_create_user_command(bufnr, 'FlydslRule', function() open_rule(bufnr) end,
      { nargs = 0, desc = 'flydsl-ls: open the rule page of the finding under the cursor' })
    vim.api.nvim_buf_create_user_command(bufnr, 'FlydslMigrate', function(opts) migrate(client, bufnr, opts) end,
      { nargs = '?', desc = 'flydsl-ls: apply every fix in a kernel and the helpers only it uses' })
  end,
}
