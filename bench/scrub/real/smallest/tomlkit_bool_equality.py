import tomlkit
assert tomlkit.parse('a = true').item('a') == tomlkit.parse('a = true').item('a'), 'scrub: wrong result still present'
