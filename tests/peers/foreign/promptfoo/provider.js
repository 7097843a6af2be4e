// A provider for the fixture runs: no model, a fixed answer per question. Variant "b" (the
// changed system) answers some questions differently and fails on one, so the two runs flip.
class FixtureProvider {
  constructor(options) {
    this.variant = (options.config && options.config.variant) || 'a';
  }
  id() {
    return 'fixture-' + this.variant;
  }
  async callApi(prompt, context) {
    const q = context.vars.question;
    const b = this.variant === 'b';
    if (b && q === 'Spell "error" backwards') {
      return { error: 'fixture provider: simulated upstream 503' };
    }
    const answers = {
      'Capital of France?': 'Paris',
      'Capital of Japan?': b ? 'Kyoto' : 'Tokyo',
      'Capital of Peru?': 'Lima',
      '2 + 2?': '4',
      '3 * 7?': b ? '21' : '20',
      'Largest planet?': 'Jupiter',
      'Colour of the sky?': b ? 'Blue' : 'blue',
      'Spell "error" backwards': 'rorre',
      'Name a prime': b ? '9' : '7',
      'Say hello in JSON': b ? '{"greeting": "hello"}' : 'hello',
      '中国的首都是?': '北京',
      'Boiling point of water in C?': b ? '100' : '90',
    };
    return { output: answers[q] !== undefined ? answers[q] : 'I do not know' };
  }
}
module.exports = FixtureProvider;
