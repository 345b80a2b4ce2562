" Headless Vim 9 + ALE check of docs/editors/other.md's snippet, run by test_emacs_vim.py in
" a pseudo-terminal (`script`):  vim -N -u ale_e2e.vim -i NONE kernel.py
" Environment: FLYDSL_E2E_ALE (ALE's folder), FLYDSL_E2E_SNIPPET (the docs' Vim snippet),
" FLYDSL_E2E_RESULT (the JSON report). Waits for ALE's flydsl-ls findings, then asks the
" server for a hover on a deprecated API through ALE's LSP connection, and quits.
set nocompatible
let &runtimepath = $FLYDSL_E2E_ALE . ',' . &runtimepath
filetype plugin on
let g:ale_lint_on_enter = 1
let g:ale_lint_on_text_changed = 'never'
let g:ale_echo_cursor = 0
let g:ale_set_signs = 1
execute 'source ' . fnameescape($FLYDSL_E2E_SNIPPET)

let s:result = {'steps': []}
let s:deadline = reltimefloat(reltime()) + 180

function! s:Finish(ok, error) abort
  let s:result.ok = a:ok ? v:true : v:false
  let s:result.error = a:error
  call writefile([json_encode(s:result)], $FLYDSL_E2E_RESULT)
  qall!
endfunction

function! s:OnHover(response) abort
  let l:contents = get(get(a:response, 'result', {}), 'contents', {})
  let s:result.hover = type(l:contents) == v:t_dict ? get(l:contents, 'value', '') : string(l:contents)
  call add(s:result.steps, 'hover')
  call s:Finish(1, '')
endfunction

function! s:Poll(timer) abort
  try
    if reltimefloat(reltime()) > s:deadline
      call timer_stop(a:timer)
      return s:Finish(0, 'timed out; steps: ' . join(s:result.steps, ', '))
    endif
    if index(s:result.steps, 'diagnostics') >= 0
      return
    endif
    let l:items = filter(copy(ale#engine#GetLoclist(bufnr(''))), {_, v -> get(v, 'linter_name', '') is# 'flydsl-ls'})
    if empty(l:items)
      return
    endif
    call timer_stop(a:timer)
    let s:result.diagnostics = map(l:items, {_, v -> {'lnum': v.lnum, 'col': v.col, 'code': get(v, 'code', ''), 'text': v.text}})
    call add(s:result.steps, 'diagnostics')
    let l:lnum = search('acc\.maximumf(peer)', 'w')
    let l:col = stridx(getline(l:lnum), 'maximumf') + 3
    let l:message = ale#lsp#message#Hover(bufnr(''), l:lnum, l:col)
    call ale#lsp_linter#SendRequest(bufnr(''), 'flydsl-ls', l:message, function('s:OnHover'))
  catch
    call s:Finish(0, v:exception . ' at ' . v:throwpoint)
  endtry
endfunction

autocmd VimEnter * call timer_start(200, function('s:Poll'), {'repeat': -1})
