# bash completion for agentjail(1). Installed by `make install` into
# $(PREFIX)/share/bash-completion/completions/agentjail.

_agentjail_profiles() {
	agentjail profiles --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)".*/\1/p'
}

_agentjail_sessions() {
	agentjail sessions --json 2>/dev/null | sed -n 's/^    "id": "\([^"]*\)".*/\1/p'
}

_agentjail() {
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local commands="run verify doctor profiles shim sessions show log net ps exec stop rm quarantine resume tui
		cache home config trust untrust diff apply discard checkpoint rollback"
	local policy="--fs --net --ask-timeout --allow-domain --deny-domain --map-host --publish
		--allow-http --ssh-agent --gpg-agent --workspace --rw --ro --hide --dev --env
		--allow-ptrace --agent-writable-instructions --memory --pids --home --dry-run --quiet
		--help"

	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) return 0 ;; # the jailed command's own arguments: leave them to it
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done

	case $prev in
	--fs) mapfile -t COMPREPLY < <(compgen -W "read-only workspace-write review danger-full-access ro rw full" -- "$cur"); return 0 ;;
	--backend) mapfile -t COMPREPLY < <(compgen -W "local landlock opensandbox" -- "$cur"); return 0 ;;
	--net) mapfile -t COMPREPLY < <(compgen -W "off on allow ask" -- "$cur"); return 0 ;;
	--memory) mapfile -t COMPREPLY < <(compgen -W "unlimited 512M 1G 4G 8G 16G" -- "$cur"); return 0 ;;
	--pids) mapfile -t COMPREPLY < <(compgen -W "unlimited 1024 4096" -- "$cur"); return 0 ;;
	--home) mapfile -t COMPREPLY < <(compgen -W "tmp persist" -- "$cur"); return 0 ;;
	--workspace | --dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return 0 ;;
	--rw | --ro | --hide | --dev) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0 ;;
	--env) mapfile -t COMPREPLY < <(compgen -v -- "$cur"); return 0 ;;
	--allow-domain | --deny-domain | --map-host | --publish | --ask-timeout | --allow-http) return 0 ;;
	esac

	if [ -z "$cmd" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$commands $(_agentjail_profiles) --version --help" -- "$cur")
		return 0
	fi
	case $cmd in
	run)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$policy --backend" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		fi ;;
	verify) mapfile -t COMPREPLY < <(compgen -W "$policy --backend --json" -- "$cur") ;;
	doctor) mapfile -t COMPREPLY < <(compgen -W "--json --help" -- "$cur") ;;
	profiles) mapfile -t COMPREPLY < <(compgen -W "--json --help $(_agentjail_profiles)" -- "$cur") ;;
	shim)
		if [ "$COMP_CWORD" -eq $((i + 1)) ]; then
			mapfile -t COMPREPLY < <(compgen -W "install remove status" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "--dir $(_agentjail_profiles)" -- "$cur")
		fi ;;
	sessions) mapfile -t COMPREPLY < <(compgen -W "--all --json --help" -- "$cur") ;;
	show) mapfile -t COMPREPLY < <(compgen -W "--json --help $(_agentjail_sessions)" -- "$cur") ;;
	log) mapfile -t COMPREPLY < <(compgen -W "--last --json --follow --suggest --apply --yes --help $(_agentjail_sessions)" -- "$cur") ;;
	rm) mapfile -t COMPREPLY < <(compgen -W "$(_agentjail_sessions)" -- "$cur") ;;
	ps) mapfile -t COMPREPLY < <(compgen -W "--json --help" -- "$cur") ;;
	exec | stop)
		if [ "$COMP_CWORD" -eq $((i + 1)) ]; then
			mapfile -t COMPREPLY < <(compgen -W "--last --help $(_agentjail_sessions)" -- "$cur")
		fi ;;
	net)
		if [ "$COMP_CWORD" -eq $((i + 1)) ]; then
			mapfile -t COMPREPLY < <(compgen -W "questions allow deny" -- "$cur")
		elif [ "$COMP_CWORD" -eq $((i + 2)) ]; then
			mapfile -t COMPREPLY < <(compgen -W "--last $(_agentjail_sessions)" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "--once --always --json" -- "$cur")
		fi ;;
	quarantine)
		if [ "${COMP_WORDS[i + 1]}" = restore ] && [ "$COMP_CWORD" -gt $((i + 1)) ]; then
			if [[ $cur == -* ]]; then
				mapfile -t COMPREPLY < <(compgen -W "--yes --help" -- "$cur")
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
		else
			mapfile -t COMPREPLY < <(compgen -W "restore --all --help $(_agentjail_sessions)" -- "$cur")
		fi ;;
	resume) mapfile -t COMPREPLY < <(compgen -W "--last --dry-run --quiet --help $(_agentjail_sessions)" -- "$cur") ;;
	cache)
		if [[ $prev == --workspace ]]; then
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		elif [[ ${COMP_WORDS[2]:-} == clean && $COMP_CWORD -gt 2 ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--workspace --all" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "size clean --help" -- "$cur")
		fi ;;
	home) mapfile -t COMPREPLY < <(compgen -W "clean --workspace --all --help $(_agentjail_sessions)" -- "$cur") ;;
	config) mapfile -t COMPREPLY < <(compgen -W "--json --path --help" -- "$cur") ;;
	trust)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--list --help" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		fi ;;
	untrust) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	tui) mapfile -t COMPREPLY < <(compgen -W "--help" -- "$cur") ;;
	diff)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--last --stat --json --help" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_agentjail_sessions)" -f -- "$cur")
		fi ;;
	apply)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--last --force --expect --help" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_agentjail_sessions)" -f -- "$cur")
		fi ;;
	discard | rollback) mapfile -t COMPREPLY < <(compgen -W "--last --help $(_agentjail_sessions)" -- "$cur") ;;
	checkpoint) mapfile -t COMPREPLY < <(compgen -W "--last --list --help $(_agentjail_sessions)" -- "$cur") ;;
	*) mapfile -t COMPREPLY < <(compgen -W "$policy" -- "$cur") ;; # an agent: POLICY, then -- ARGS
	esac
	return 0
}
complete -o default -F _agentjail agentjail
