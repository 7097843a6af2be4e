// The 404 page is drawn by the server; its script only wires the language switch.
import './common/boot.js';
