-- Headless Neovim 0.11 end-to-end check, run by test_neovim_e2e.py:
--   nvim --clean --headless -u nvim_e2e.lua kernel.py
-- Starts flydsl-ls through editors/nvim/lsp/flydsl_ls.lua, waits for its diagnostics,
-- applies the FLY101 quick fix through vim.lsp.buf.code_action, writes the file, hovers a
-- deprecated API, shows the inlay hints (vim.lsp.inlay_hint) and turns them off through the
-- settings, runs fix-all on $FLYDSL_E2E_FIXALL, runs :FlydslCompile and :FlydslShowIsa
-- on $FLYDSL_E2E_COMPILE, saves $FLYDSL_E2E_ONSAVE with the docs' fix-all-on-save snippet
-- ($FLYDSL_E2E_ONSAVE_SNIPPET), runs the "Add compile example" lens on $FLYDSL_E2E_BUILDER
-- and the new example's Compile lens, and reports what happened as JSON in $FLYDSL_E2E_RESULT.
-- Neovim runs embedded, its UI the test's (nvim_ui.py), which saves the screen at the
-- checkpoints `screen` names: the screenshots of docs/editors/neovim.md.
local result = { steps = {} }
local function note(step) table.insert(result.steps, step) end

local function finish(ok, err)
  result.ok = ok
  result.error = err
  local f = assert(io.open(vim.env.FLYDSL_E2E_RESULT, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qall!')
end

vim.opt.runtimepath:prepend(vim.env.FLYDSL_E2E_RUNTIME)
vim.lsp.log.set_level('info') -- the server's window/logMessage lines, at their own levels
vim.cmd('filetype on')
vim.lsp.config('flydsl_ls', {
  cmd = { vim.env.FLYDSL_E2E_PYTHON, '-m', 'flydsl_ls', 'serve' },
})
vim.lsp.enable('flydsl_ls')
vim.diagnostic.config({ virtual_text = true }) -- as docs/editors/neovim.md suggests

--- The screen as the UI has it now, saved under `name` by the test's UI.
local function screen(name)
  vim.cmd('redraw!')
  vim.rpcnotify(0, 'flydsl_screen', name)
end

--- The lenses of the buffer as {line, title}, in line order, once one satisfies `wanted`
--- (refreshed until then, as the docs' autocommand would on each BufEnter).
local function lenses_until(bufnr, wanted)
  local found
  vim.wait(60000, function()
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    found = {}
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
      if lens.command then table.insert(found, { line = lens.range.start.line, title = lens.command.title }) end
    end
    table.sort(found, function(a, b) return a.line < b.line or (a.line == b.line and a.title < b.title) end)
    return wanted(found)
  end, 200)
  return found
end

local function has_title(title)
  return function(found)
    for _, lens in ipairs(found) do
      if lens.title:find(title, 1, true) == 1 then return true end
    end
    return false
  end
end

-- "Add compile example" on a kernel builder ($FLYDSL_E2E_BUILDER): run its lens, as
-- vim.lsp.codelens.run() on the builder's line; the buffer gets the example, whose lenses
-- replace it; then run the example's Compile lens (picked in vim.ui.select).
local function add_example()
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_BUILDER))
  local bbuf = vim.api.nvim_get_current_buf()
  local before = lenses_until(bbuf, has_title('Add compile example'))
  result.add_example = { lenses_before = before }
  if not has_title('Add compile example')(before) then return finish(false, 'no "Add compile example" lens') end
  local text = table.concat(vim.api.nvim_buf_get_lines(bbuf, 0, -1, false), '\n')
  vim.api.nvim_win_set_cursor(0, { before[1].line + 1, 0 })
  vim.lsp.codelens.run()
  if not vim.wait(60000, function()
    return table.concat(vim.api.nvim_buf_get_lines(bbuf, 0, -1, false), '\n') ~= text
  end, 50) then
    return finish(false, 'the "Add compile example" lens did not change the buffer')
  end
  result.add_example.buffer = table.concat(vim.api.nvim_buf_get_lines(bbuf, 0, -1, false), '\n') .. '\n'
  -- window/showDocument after the edit: the cursor goes to the new example's name
  local example_row = vim.fn.search('^def build_copy_module_example(', 'nw')
  vim.wait(10000, function() return vim.api.nvim_win_get_cursor(0)[1] == example_row end, 50)
  result.add_example.cursor = vim.api.nvim_win_get_cursor(0)
  result.add_example.cursor_buffer = vim.api.nvim_get_current_buf() == bbuf
  local after = lenses_until(bbuf, function(found) return has_title('Compile (')(found) and not has_title('Add')(found) end)
  result.add_example.lenses_after = after
  note('add-example')

  -- The example's Compile lens: three lenses on its line, so Neovim asks which one.
  local compile_line
  for _, lens in ipairs(after) do
    if lens.title:find('Compile (', 1, true) == 1 then compile_line = lens.line end
  end
  if not compile_line then return finish(false, 'no Compile lens on the new example') end
  local offered, compiled
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(opts.format_item, items)
    for _, item in ipairs(items) do
      if opts.format_item(item):find('Compile (', 1, true) == 1 then return on_choice(item) end
    end
    on_choice(nil)
  end
  local handler = vim.lsp.handlers['workspace/executeCommand']
  vim.lsp.handlers['workspace/executeCommand'] = function(err, res, ctx, config)
    compiled = err and { error = err.message } or res
    return handler and handler(err, res, ctx, config)
  end
  vim.api.nvim_win_set_cursor(0, { compile_line + 1, 0 })
  vim.lsp.codelens.run()
  if not vim.wait(200000, function() return compiled ~= nil end, 100) then
    return finish(false, 'the Compile lens gave no result')
  end
  result.add_example.offered = offered
  result.add_example.compile = {
    status = compiled.status, arch = compiled.arch, example = compiled.example,
    message = compiled.message, error = compiled.error,
  }
  note('example-compiled')
  finish(true, nil)
end

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  local attached = vim.wait(60000, function()
    return #vim.lsp.get_clients({ bufnr = bufnr, name = 'flydsl_ls' }) > 0
  end, 50)
  if not attached then return finish(false, 'flydsl_ls never attached') end
  note('attached')

  local target
  local got = vim.wait(60000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == 'FLY101' and d.source == 'flydsl-ls' and d.severity == vim.diagnostic.severity.WARN then
        local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]
        if line:find('_AV(tid)', 1, true) then target = d return true end
      end
    end
    return false
  end, 50)
  if not got then return finish(false, 'no FLY101 diagnostic') end
  result.diagnostics = #vim.diagnostic.get(bufnr)
  result.diagnostic = { lnum = target.lnum, col = target.col, message = target.message }
  note('diagnostics')
  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  screen('neovim-diagnostics')

  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  -- :FlydslRule opens the page the finding links to (a file installed with flydsl-ls).
  local kernel_win = vim.api.nvim_get_current_win()
  vim.cmd('FlydslRule')
  local page = vim.api.nvim_get_current_buf()
  result.rule = {
    href = target.user_data.lsp.codeDescription.href,
    name = vim.api.nvim_buf_get_name(page),
    title = vim.api.nvim_buf_get_lines(page, 0, 3, false),
    split = vim.api.nvim_get_current_win() ~= kernel_win and vim.api.nvim_win_get_buf(kernel_win) == bufnr,
    modifiable = vim.bo[page].modifiable,
    buftype = vim.bo[page].buftype,
  }
  vim.cmd('close')
  vim.api.nvim_set_current_win(kernel_win)
  note('rule')

  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local titles = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      return action.title == 'Remove the ArithValue wrapper' and action.isPreferred == true
    end,
  })
  local changed = vim.wait(60000, function()
    local now = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    return table.concat(now, '\n') ~= table.concat(before, '\n')
  end, 50)
  result.titles = titles
  if not changed then return finish(false, 'the quick fix did not change the buffer') end
  note('applied')

  vim.cmd('write')
  note('written')

  -- Hover on a deprecated API (fx.get, FLY901): Neovim's own hover float, once the
  -- findings of the fixed text are in (FLY901 on fx.get's new line), as a user would.
  local get_lnum
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find('fx.get(', 1, true)
    if col then vim.api.nvim_win_set_cursor(0, { lnum, col + 2 }) get_lnum = lnum - 1 break end
  end
  vim.wait(30000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = get_lnum })) do
      if d.code == 'FLY901' then return true end
    end
    return false
  end, 50)
  vim.lsp.buf.hover()
  local hover
  vim.wait(30000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
        return true
      end
    end
    return false
  end, 50)
  if not hover then return finish(false, 'no hover window') end
  result.hover = hover
  note('hover')
  screen('neovim-hover')
  vim.cmd('fclose!')

  -- Inlay hints, as Neovim holds them to draw (vim.lsp.inlay_hint.get; the screen shows
  -- them too); then the setting turns them off: the server asks Neovim to refresh
  -- (workspace/inlayHint/refresh) and they go.
  local function drawn()
    local hints = {}
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = bufnr })) do
      local hint = item.inlay_hint
      table.insert(hints, { lnum = hint.position.line, col = hint.position.character, text = hint.label })
    end
    table.sort(hints, function(a, b) return a.lnum < b.lnum end)
    return hints
  end
  vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  if not vim.wait(30000, function() return #drawn() > 0 end, 50) then
    return finish(false, 'no inlay hints drawn')
  end
  result.hints = drawn()
  note('inlay hints')
  screen('neovim-inlay-hints')
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'flydsl_ls' })[1]
  client:notify('workspace/didChangeConfiguration', { settings = { ['flydsl-ls'] = { inlayHints = false } } })
  if not vim.wait(30000, function() return #drawn() == 0 end, 50) then
    return finish(false, 'the inlay hints stayed once the setting turned them off')
  end
  note('inlay hints off')

  -- Fix-all on a second file (the legacy example), as a code action of kind source.fixAll.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_FIXALL))
  local fixbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return #vim.diagnostic.get(fixbuf) > 0 end, 50) then
    return finish(false, 'no diagnostics in the fix-all file')
  end
  local unfixed = table.concat(vim.api.nvim_buf_get_lines(fixbuf, 0, -1, false), '\n')
  vim.lsp.buf.code_action({ context = { only = { 'source.fixAll.flydsl-ls' } }, apply = true })
  if not vim.wait(60000, function()
    return table.concat(vim.api.nvim_buf_get_lines(fixbuf, 0, -1, false), '\n') ~= unfixed
  end, 50) then
    return finish(false, 'fix-all did not change the buffer')
  end
  vim.cmd('write')
  note('fix-all')

  -- :FlydslCompile and :FlydslShowIsa (editors/nvim/lsp/flydsl_ls.lua) on a compile example.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_COMPILE))
  local cbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return vim.fn.exists(':FlydslCompile') == 2 end, 50) then
    return finish(false, ':FlydslCompile was not defined on attach')
  end
  vim.cmd('FlydslCompile')
  if not vim.wait(200000, function() return vim.b[cbuf].flydsl_result ~= nil end, 100) then
    return finish(false, ':FlydslCompile gave no result')
  end
  local compiled = vim.b[cbuf].flydsl_result
  result.compile = { status = compiled.status, arch = compiled.arch, example = compiled.example, message = compiled.message }
  note('compiled')
  if compiled.status == 'ok' then
    -- :FlydslShowIsa opens the ISA read-only in a split beside the kernel, whose window
    -- keeps its buffer; a second one reuses that split.
    local kernel_win = vim.api.nvim_get_current_win()
    local function show_isa()
      vim.b[cbuf].flydsl_result = nil
      vim.cmd('FlydslShowIsa')
      if not vim.wait(200000, function() return vim.b[cbuf].flydsl_result ~= nil end, 100) then
        return nil
      end
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        local b = vim.api.nvim_win_get_buf(win)
        if vim.api.nvim_buf_get_name(b):match('_final_isa%.s$') then return b, win end
      end
    end
    local isa, isa_win = show_isa()
    if not isa then return finish(false, ':FlydslShowIsa opened no ISA') end
    result.isa = table.concat(vim.api.nvim_buf_get_lines(isa, 0, 40, false), '\n')
    result.isa_view = {
      kernel_window_kept = vim.api.nvim_win_is_valid(kernel_win) and vim.api.nvim_win_get_buf(kernel_win) == cbuf,
      kernel_modified = vim.bo[cbuf].modified,
      split = isa_win ~= kernel_win,
      focused = vim.api.nvim_get_current_win() == isa_win,
      modifiable = vim.bo[isa].modifiable,
      buftype = vim.bo[isa].buftype,
      windows = #vim.api.nvim_tabpage_list_wins(0),
    }
    -- linked to the source: the cursor on a line lights that line's instructions in the
    -- ISA; <CR> on one goes back to its line; `:w` still writes the kernel (its window kept
    -- the focus)
    local store = nil
    for i, text in ipairs(vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)) do
      if vim.trim(text) == 'fx.copy(float4, reg_c, dst_c)' then store = i end
    end
    vim.api.nvim_set_current_win(kernel_win)
    vim.api.nvim_win_set_cursor(kernel_win, { store, 4 })
    vim.api.nvim_exec_autocmds('CursorMoved', { buffer = cbuf })
    local lit = vim.b[cbuf].flydsl_isa_highlight or {}
    local lit_text = {}
    for _, row in ipairs(lit) do
      table.insert(lit_text, vim.split(vim.trim(vim.api.nvim_buf_get_lines(isa, row, row + 1, false)[1]), '%s')[1])
    end
    local scrolled = lit[1] ~= nil and vim.api.nvim_win_get_cursor(isa_win)[1] == lit[1] + 1
    local marks = vim.api.nvim_buf_get_extmarks(isa, vim.api.nvim_get_namespaces().flydsl_isa, 0, -1, {})
    screen('neovim-isa-linked')
    local write_ok = pcall(vim.cmd, 'write')
    vim.api.nvim_set_current_win(isa_win)
    vim.api.nvim_win_set_cursor(isa_win, { lit[1] + 1, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    result.isa_link = {
      lit = lit_text,
      marks = #marks,
      scrolled_to_it = scrolled,
      back_in_kernel = vim.api.nvim_get_current_win() == kernel_win,
      back_line = vim.api.nvim_win_get_cursor(0)[1] == store,
      write_ok = write_ok,
    }
    -- :FlydslCompareDisk: the buffer (an add made a multiply, unsaved) against the file on
    -- disk; then the buffer as it was, unmodified
    local saved = vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)
    vim.api.nvim_buf_set_lines(cbuf, store - 2, store - 1, false,
      { (saved[store - 1]:gsub('reg_a%.load%(%) %+ reg_b%.load%(%)', 'reg_a.load() * reg_b.load()')) })
    vim.b[cbuf].flydsl_result = nil
    vim.api.nvim_set_current_win(kernel_win)
    vim.cmd('FlydslCompareDisk')
    vim.wait(200000, function() return vim.b[cbuf].flydsl_result ~= nil end, 100)
    local compared = vim.b[cbuf].flydsl_result or {}
    local kernel = compared.kernels and compared.kernels[1] or {}
    result.compare_disk = { status = compared.status, verdict = kernel.verdict, lines = kernel.isaByLine }
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, saved)
    vim.bo[cbuf].modified = false
    vim.api.nvim_set_current_win(kernel_win)
    local again = show_isa()
    result.isa_view.again_new_buffer = again ~= nil and again ~= isa
    result.isa_view.windows_again = #vim.api.nvim_tabpage_list_wins(0)
    vim.api.nvim_set_current_win(kernel_win)
    note('isa')
  end

  -- The "fix-all on every save" snippet of docs/editors/neovim.md, as the docs show it:
  -- after :write, the file on disk has the fixes and the buffer is not modified.
  dofile(vim.env.FLYDSL_E2E_ONSAVE_SNIPPET)
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_ONSAVE))
  local sbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return #vim.diagnostic.get(sbuf) > 0 end, 50) then
    return finish(false, 'no diagnostics in the fix-on-save file')
  end
  vim.cmd('write')
  -- an edit the snippet applied too late (asynchronously) would arrive in the meantime
  vim.wait(1000, function() return vim.bo[sbuf].modified end, 50)
  result.on_save = { modified = vim.bo[sbuf].modified }
  note('fix-on-save')
  add_example()
end

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then finish(false, tostring(err)) end
    end)
  end,
})
